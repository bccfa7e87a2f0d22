package cluster

import (
	"errors"
	"slices"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/status"
)

// reconcile takes the cameras placed on this node, releases those placed
// elsewhere once their node is alive, and tells the owners of every change
// of a recorded camera's record.
func (st *state) reconcile() {
	if st.leaving || st.standingDown() || len(st.synced) < 3 || !st.cfg.Connected() {
		return
	}
	members := sortedMembers(st.alive())
	placement := st.place(members)
	st.placed, st.placedAt = placement, time.Now()
	now := st.viewAt()
	waiting := map[string]bool{}
	defer func() {
		for id := range st.awaiting {
			if !waiting[id] {
				delete(st.awaiting, id)
			}
		}
	}()
	for id, c := range st.cameras {
		if _, taking := st.taking[id]; taking || st.busy[id] {
			continue
		}
		h := st.mine[id]
		switch {
		case c.Blocked:
			if h != nil {
				st.release(id, status.CauseCameraBlocked, "camera blocked")
			}
		case isPush(c):
			// A push camera belongs to the node its publisher reached
			// (Claim), not to the placement.
			if h != nil {
				st.keep(id, h, c)
			}
		case h != nil:
			if win := placement[id]; len(members) > 0 && win != st.cfg.NodeID {
				switch {
				case win == "":
					st.release(id, status.CauseNodeHandover, "no room for the camera on this node")
					continue
				case st.seenBeating(win):
					st.release(id, status.CauseNodeHandover, "node "+win+" wins the camera")
					continue
				}
				// The winner is not seen beating yet: it may be dead
				// (its last heartbeat delivered again), or started a
				// moment ago. The camera stays here until it is.
			}
			if h.missing || !h.contested.IsZero() {
				if st.settleLease(id, h); st.mine[id] != h {
					continue
				}
			}
			st.keep(id, h, c)
		case placement[id] == st.cfg.NodeID:
			l, ok := st.leases[id]
			switch {
			case !ok:
				st.take(id, 0, true, 1)
			case l.node == st.cfg.NodeID:
				st.take(id, l.rev, false, 1) // ours from before a restart, or a take whose answer was lost
			case st.sees() && !st.holderLive(l) && now.Sub(l.seen) > st.cfg.LeaseTTL:
				st.take(id, l.rev, false, 1) // its holder is dead
			case st.holderLive(l):
				waiting[id] = true
				st.awaitRelease(id)
			}
		default:
			if l, ok := st.leases[id]; ok && st.ours(l.node, l.instance) && !isPush(c) {
				// Taken by this process, answer lost, and placed elsewhere
				// since: let it go.
				st.stopThen(id, false, status.CauseNodeHandover, l.rev)
			}
		}
	}
	for id := range st.mine {
		if _, ok := st.cameras[id]; !ok && !st.busy[id] {
			st.release(id, status.CauseCameraRemoved, "camera removed")
		}
	}
	st.reportUnplaced(members, placement)
}

// keep keeps a held camera recorded with its current record: started when
// it is not (its record arrived after its lease), told of every change of
// its record.
func (st *state) keep(id string, h *held, c camera.Config) {
	switch {
	case !h.recording && st.fresh():
		st.record(id, h)
	case h.recording && h.record != c:
		st.log.Info("camera record changed", zap.String("camera", id))
		st.record(id, h)
	}
}

// place assigns each pulled camera to the live member with the highest
// rendezvous score that has room for it (MaxCameras, counting the push
// cameras it holds), in camera id order, so that every node that sees the
// same members and cameras computes the same placement. A camera no member
// has room for is placed on "". Without limits this is plain weighted
// rendezvous: adding a node moves only the cameras it now wins.
func (st *state) place(members []member) map[string]string {
	used := map[string]int{}
	for id, l := range st.leases {
		if c, ok := st.cameras[id]; ok && isPush(c) && !c.Blocked {
			used[l.node]++
		}
	}
	ids := make([]string, 0, len(st.cameras))
	for id, c := range st.cameras {
		if !isPush(c) && !c.Blocked {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	limited := slices.ContainsFunc(members, func(m member) bool { return m.Max > 0 })
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		if !limited {
			out[id] = winner(id, members)
			continue
		}
		out[id] = ""
		for _, m := range ranked(id, members) {
			if m.Max <= 0 || used[m.ID] < m.Max {
				out[id] = m.ID
				used[m.ID]++
				break
			}
		}
	}
	return out
}

// reportUnplaced tells OnUnplaced of the cameras no member has room for
// and that this node wins by plain rendezvous, when that set changes.
func (st *state) reportUnplaced(members []member, placement map[string]string) {
	var ids []string
	for id, node := range placement {
		if node == "" && len(members) > 0 && winner(id, members) == st.cfg.NodeID {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if slices.Equal(ids, st.unplaced) {
		return
	}
	st.unplaced = ids
	if len(ids) > 0 {
		st.log.Warn("no recorder node has room for these cameras", zap.Strings("cameras", ids))
	}
	if st.cfg.OnUnplaced != nil {
		st.cfg.OnUnplaced(ids)
	}
}

// awaitRelease follows a camera this node wins while a live node holds its
// lease: that node releases it at its next tick, deleting the lease. The
// watch of assign may not show the delete (its consumer's server died), so
// once the lease has looked held for two heartbeat intervals it is read,
// then once a heartbeat interval.
func (st *state) awaitRelease(id string) {
	now := time.Now()
	w, ok := st.awaiting[id]
	if !ok {
		st.awaiting[id] = awaiting{since: now}
		return
	}
	if now.Sub(w.since) < 2*st.cfg.Heartbeat || now.Sub(w.read) < st.cfg.Heartbeat {
		return
	}
	w.read = now
	st.awaiting[id] = w
	st.spawn(func() func() {
		e, err := st.get(id)
		return func() {
			switch {
			case st.mine[id] != nil:
			case errors.Is(err, ErrNotFound):
				st.leaseDeleted(Entry{Key: id, Deleted: true}, true)
			case err == nil:
				if l, ok := st.leases[id]; !ok || l.rev != e.Rev {
					st.onLease(e) // changed: the watch lags
				}
			}
		}
	})
}
