package cluster

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/status"
)

// Control-plane outages (docs/cluster.md, Control-plane outage).
//
// A node whose heartbeats are not stored is cut from the control plane: it
// cannot tell whether the other nodes are alive, and they cannot tell that
// it is. Recording comes first: it keeps recording every camera it holds,
// however long that lasts, and stops one only when it learns that the
// camera was removed or blocked, or that another process holds its lease
// and the placement gives the camera to that process. While cut off it
// judges liveness as it last could (viewAt), so its placement does not
// change, and it takes no lease from a node it merely stopped seeing.
//
// The same holds while its heartbeats are stored but its watch of the
// nodes bucket lags (the server holding the watch's consumer died, and the
// client has not yet made a new one): another node's heartbeat that does
// not change there says nothing of that node. The node sees the others as
// far as its watch has delivered its own heartbeats.

// viewAt is the time at which this node judges the other nodes' liveness:
// now while its nodes watch delivers its own heartbeats; while it does
// not (they are not stored, or the watch lags), shortly after the last one
// it delivered: what the node saw then is all it knows.
func (st *state) viewAt() time.Time {
	now := time.Now()
	if v := st.watchedOK.Add(st.sightSlack()); v.Before(now) {
		return v
	}
	return now
}

// sees reports whether this node's view of the others is current: its
// nodes watch delivered one of its own heartbeats, sent within sightSlack.
// Only then does it take a lease from a holder that looks dead.
func (st *state) sees() bool { return time.Since(st.watchedOK) <= st.sightSlack() }

// watched notes a heartbeat of this process, sent at sent, delivered by the
// nodes watch.
func (st *state) watched(sent time.Time) {
	if !sent.After(st.watchedOK) {
		return
	}
	if !st.sees() {
		st.sightSince = time.Now()
		if st.behind {
			st.log.Info("nodes watch caught up: other nodes seen again", zap.Duration("behind", time.Since(st.watchedOK)))
		}
		st.behind = false
	}
	st.watchedOK = sent
}

// noteBehind logs, once each time, that the node's heartbeats are stored
// but its watch has not delivered them for sightSlack (right after an
// outage the watch gets that long to catch up).
func (st *state) noteBehind() {
	if st.behind || st.blind() || st.sees() || time.Since(st.sightSince) <= st.sightSlack() {
		return
	}
	st.behind = true
	st.log.Warn("nodes watch behind the bucket: no camera is taken from another node until it catches up",
		zap.Duration("since", time.Since(st.watchedOK)))
}

// sightSlack is how long without a stored heartbeat the node still trusts
// its view of the others: two heartbeat intervals.
func (st *state) sightSlack() time.Duration { return 2 * st.cfg.Heartbeat }

// blind reports whether this node's heartbeats have not been stored for
// longer than sightSlack.
func (st *state) blind() bool { return time.Since(st.renewedOK) > st.sightSlack() }

// renewed notes a heartbeat of this process stored, sent at sent. The
// first one after an outage ends it: the members known when it began
// count as seen now (they had no way to be seen meanwhile, and get
// NodeTimeout to show they still are), and the lease of every held camera
// is read again, so that a camera taken over meanwhile is found at once.
func (st *state) renewed(sent time.Time) {
	if !sent.After(st.renewedOK) {
		return
	}
	if !st.blind() {
		st.renewedOK = sent
		return
	}
	// Every node known when the outage began counts as seen now: what this
	// node saw of them then may be stale (a watch restarted by a server
	// restart delivers late), and a node it merely could not see must not
	// lose its cameras to it. Each gets NodeTimeout to show it is alive.
	now := time.Now()
	for id := range st.members {
		st.members[id] = now
	}
	if st.outage {
		st.log.Info("heartbeat stored again: control plane reachable", zap.Duration("outage", now.Sub(st.renewedOK)))
	}
	st.outage = false
	st.renewedOK = sent
	st.sightSince = now
	st.placed = nil // members changed: the next placement is computed afresh
	st.verifyLeases()
}

// noteOutage logs, once per outage, that the node records on without the
// control plane.
func (st *state) noteOutage() {
	if st.outage || !st.blind() {
		return
	}
	st.outage = true
	n := 0
	for _, h := range st.mine {
		if h.recording {
			n++
		}
	}
	st.log.Warn("heartbeat not stored: cameras keep recording; no camera is taken from another node until it is",
		zap.Int("cameras", n), zap.Duration("since", time.Since(st.renewedOK)))
}

// restartLaggingWatch starts the nodes watch again when it has delivered
// none of this node's stored heartbeats for NodeTimeout past sightSlack: a
// JetStream watch whose consumer's server died waits for missed idle
// heartbeats (10 to 20 s) before it makes a new consumer, and a new watch
// delivers every node's current heartbeat at once. At most once per that
// time.
func (st *state) restartLaggingWatch() {
	wait := st.sightSlack() + st.cfg.NodeTimeout
	if st.blind() || time.Since(st.watchedOK) <= wait || time.Since(st.rewatched) <= wait || time.Since(st.sightSince) <= wait {
		return
	}
	select {
	case st.rewatch <- struct{}{}:
		st.rewatched = time.Now()
		st.log.Info("nodes watch started again: it delivered no heartbeat of this node", zap.Duration("since", time.Since(st.watchedOK)))
	default:
	}
}

// verifyLeases reads the lease of every held camera, outside the loop, and
// handles each as the watcher would have: a lease another process wrote,
// or none at all.
func (st *state) verifyLeases() {
	ids := make([]string, 0, len(st.mine))
	for id := range st.mine {
		ids = append(ids, id)
	}
	st.readLeases(ids)
}

// readLeases reads the leases of held cameras ids, outside the loop, and
// handles each as the watcher would have: a lease another process wrote,
// or none at all.
func (st *state) readLeases(ids []string) {
	if len(ids) == 0 {
		return
	}
	st.spawn(func() func() {
		type read struct {
			e   Entry
			err error
		}
		got := make(map[string]read, len(ids))
		for _, id := range ids {
			e, err := st.get(id)
			got[id] = read{e, err}
		}
		return func() {
			for id, r := range got {
				h := st.mine[id]
				switch {
				case h == nil || st.busy[id]:
				case errors.Is(r.err, ErrNotFound):
					h.missing = true
				case r.err == nil:
					st.onLease(r.e)
				}
			}
		}
	})
}

// otherHolder handles a held camera whose lease another process wrote. A
// pulled camera that the placement gives to this node goes on recording:
// the holder sees the same placement and releases the lease, and this node
// takes it back without a gap. Any other camera stops at once.
func (st *state) otherHolder(id string, h *held, l Lease) {
	if st.busy[id] {
		return
	}
	if h.recording && st.winsBack(id) {
		if h.contested.IsZero() {
			h.contested = time.Now()
			st.log.Info("lease of a recorded camera written by another node; this node wins the camera and records on until it is handed back",
				zap.String("camera", id), zap.String("holder", l.Node))
		}
		h.other = l
		return
	}
	if h.recording {
		st.duplicate(id, l.TakenAt)
	}
	st.lose(id, "lease taken by "+l.Node)
}

// winsBack reports whether the placement gives pulled camera id to this
// node.
func (st *state) winsBack(id string) bool {
	c, ok := st.cameras[id]
	if !ok || c.Blocked || isPush(c) {
		return false
	}
	return st.placement()[id] == st.cfg.NodeID
}

// placement returns the placement of the cameras among the alive members,
// computed at most once a tick.
func (st *state) placement() map[string]string {
	if st.placed == nil || time.Since(st.placedAt) >= st.cfg.Tick {
		st.placed = st.place(sortedMembers(st.alive()))
		st.placedAt = time.Now()
	}
	return st.placed
}

// settleLease brings the lease of a held camera back to this node: written
// again when it is missing, taken when its other holder released it or is
// dead. A holder that does not hand it back within handBack of this node
// seeing the control plane again wins: the camera stops here.
func (st *state) settleLease(id string, h *held) {
	l, ok := st.leases[id]
	switch {
	case h.missing || (!h.contested.IsZero() && !ok):
		st.retake(id, 0, true)
	case h.contested.IsZero() || !st.sees():
	case st.ours(l.node, l.instance):
		h.contested = time.Time{}
	case !st.holderLive(l) && st.viewAt().Sub(l.seen) > st.cfg.LeaseTTL:
		st.retake(id, l.rev, false)
	case time.Since(laterTime(h.contested, st.sightSince)) > st.handBack():
		st.duplicate(id, h.other.TakenAt)
		st.lose(id, "lease held by "+l.node+", not handed back")
	case time.Since(h.read) >= st.cfg.Heartbeat:
		// The holder hands the camera back by deleting the lease; the
		// watch of assign may not show it (its consumer's server died, or
		// it lags after the outage), so the lease is read once a heartbeat
		// interval while contested.
		h.read = time.Now()
		st.readLeases([]string{id})
	}
}

// handBack is how long a contested camera's holder gets to hand it back:
// LeaseTTL, plus the time the holder's own nodes watch may lag before it is
// started again (restartLaggingWatch), during which the holder cannot see
// this node. Stopping sooner would leave a hole when it does hand back.
func (st *state) handBack() time.Duration {
	return st.cfg.LeaseTTL + st.sightSlack() + st.cfg.NodeTimeout
}

// retake writes this process's lease of a camera it records: created, or
// updated at rev. The camera goes on recording whatever the answer; a
// failed write is tried again at a later tick, or the watcher shows who
// holds the lease.
func (st *state) retake(id string, rev uint64, create bool) {
	if _, ok := st.taking[id]; ok {
		return
	}
	st.taking[id] = nil
	value := st.leaseValue()
	st.spawn(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		defer cancel()
		var newRev uint64
		var err error
		if create {
			newRev, err = st.cfg.Assign.Create(ctx, id, value)
		} else {
			newRev, err = st.cfg.Assign.Update(ctx, id, value, rev)
		}
		return func() { st.retaken(id, newRev, err) }
	})
}

// retaken is the end of a retake, on the loop.
func (st *state) retaken(id string, rev uint64, err error) {
	waiters := st.taking[id]
	delete(st.taking, id)
	h := st.mine[id]
	for _, w := range waiters {
		if err == nil && h != nil && h.recording {
			w <- nil
		} else {
			w <- errRetry("lease of camera " + id + " not written")
		}
	}
	switch {
	case err != nil:
		st.log.Debug("lease not written again", zap.String("camera", id), zap.Error(err))
		if h != nil && errors.Is(err, ErrWrongRevision) {
			h.missing = false // someone wrote it: the watcher tells who
		}
	case h == nil:
		// Released meanwhile: the lease just written goes too.
		st.stopThen(id, false, status.CauseNodeHandover, rev)
	default:
		st.log.Info("lease written again", zap.String("camera", id), zap.Uint64("rev", rev))
		st.settled(id, h, rev)
	}
}

// settled notes the lease of held camera id written by this process at
// rev; a contest ends there, and its double recording is reported.
func (st *state) settled(id string, h *held, rev uint64) {
	if rev > h.rev {
		h.rev = rev
	}
	h.missing = false
	if !h.contested.IsZero() {
		st.duplicate(id, h.other.TakenAt)
		h.contested = time.Time{}
	}
}

// duplicate reports the time camera id was recorded by this node and by
// the process that took its lease at since.
func (st *state) duplicate(id string, since time.Time) {
	d := time.Since(since)
	if since.IsZero() || d < 0 {
		return
	}
	st.log.Warn("camera recorded by two nodes", zap.String("camera", id), zap.Duration("for", d))
	if st.cfg.OnDuplicate != nil {
		st.cfg.OnDuplicate(id, d)
	}
}

func laterTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
