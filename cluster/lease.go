package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"
)

// take creates (create) or takes over (compare-and-set on rev) a lease,
// outside the loop. A claim's take tries again on the lease as the store
// has it when the watcher's view was out of date; a plain take waits for
// the next reconcile instead.
func (st *state) take(id string, rev uint64, create bool, attempts int) {
	if _, ok := st.taking[id]; ok {
		return
	}
	st.taking[id] = nil
	value := st.leaseValue()
	st.spawn(func() func() {
		var sent time.Time
		var newRev uint64
		var err error
		for i := 0; i < attempts; i++ {
			if i > 0 {
				// The watcher's view lagged the store (the holder renewed
				// or released the lease meanwhile): read the lease as it
				// is now.
				e, gerr := st.get(id)
				if gerr != nil && !errors.Is(gerr, ErrNotFound) {
					err = gerr
					break
				}
				create, rev = gerr != nil, e.Rev
			}
			ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
			sent = time.Now() // a lease counts from the request, not the answer
			if create {
				newRev, err = st.cfg.Assign.Create(ctx, id, value)
			} else {
				newRev, err = st.cfg.Assign.Update(ctx, id, value, rev)
			}
			cancel()
			if !errors.Is(err, ErrWrongRevision) {
				break
			}
		}
		return func() { st.taken(id, newRev, sent, err) }
	})
}

func (st *state) get(id string) (Entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	return st.cfg.Assign.Get(ctx, id)
}

// taken is the end of a take, on the loop.
func (st *state) taken(id string, rev uint64, sent time.Time, err error) {
	waiters := st.taking[id]
	delete(st.taking, id)
	reply := func(err error) {
		for _, w := range waiters {
			w <- err
		}
	}
	if err != nil {
		st.log.Debug("lease not taken", zap.String("camera", id), zap.Error(err))
		reply(errRetry("lease of camera " + id + " not taken"))
		return
	}
	h := &held{epoch: rev, rev: rev, renewedOK: sent}
	st.mine[id] = h
	st.log.Info("lease taken", zap.String("camera", id), zap.Uint64("epoch", rev))
	if st.leaving || st.standingDown() {
		reply(ErrClosed)
		return
	}
	c, ok := st.cameras[id]
	switch {
	case !ok || c.Blocked:
		st.release(id, "camera removed or blocked while its lease was taken")
		reply(errRetry("camera " + id + " removed or blocked"))
		return
	}
	st.record(id, h)
	reply(nil)
	st.publishHolding()
}

// record asks the owners to record camera id with its current record.
func (st *state) record(id string, h *held) {
	c, ok := st.cameras[id]
	if !ok {
		return
	}
	st.cfg.Owners.Record(c, h.epoch)
	h.recording = true
	h.record = c
}

// fresh reports whether h's lease was renewed within FenceAfter.
func (st *state) fresh(h *held) bool {
	return time.Since(h.renewedOK) < st.cfg.FenceAfter
}

// renewal is one lease renewal of a round.
type renewal struct {
	id   string
	h    *held
	rev  uint64
	sent time.Time
	err  error
}

// renew renews every held lease outside the loop, all at once and within
// half a renewal interval, one round at a time. A renewal counts from when
// it was sent: the other nodes see the lease renewed no earlier than that.
// A renewal refused for its revision reads the lease back: while it is
// still this node's (an earlier renewal timed out but was applied), its
// revision is adopted and the renewal sent again.
func (st *state) renew() {
	if st.renewing || st.leaving || !st.cfg.Connected() {
		return
	}
	round := make([]renewal, 0, len(st.mine))
	for id, h := range st.mine {
		if !st.busy[id] {
			round = append(round, renewal{id: id, h: h, rev: h.rev})
		}
	}
	if len(round) == 0 {
		return
	}
	st.renewing = true
	value := st.leaseValue()
	st.spawn(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), st.cfg.RenewInterval/2)
		defer cancel()
		var wg sync.WaitGroup
		for i := range round {
			wg.Add(1)
			go func(r *renewal) {
				defer wg.Done()
				st.renewOne(ctx, r, value)
			}(&round[i])
		}
		wg.Wait()
		return func() { st.renewed(round) }
	})
}

func (st *state) renewOne(ctx context.Context, r *renewal, value []byte) {
	r.sent = time.Now()
	rev, err := st.cfg.Assign.Update(ctx, r.id, value, r.rev)
	if !errors.Is(err, ErrWrongRevision) {
		r.rev, r.err = rev, err
		return
	}
	e, gerr := st.cfg.Assign.Get(ctx, r.id)
	var l Lease
	if gerr != nil || json.Unmarshal(e.Value, &l) != nil || !st.ours(l.Node, l.Instance) {
		r.err = err
		return
	}
	r.sent = time.Now()
	r.rev, r.err = st.cfg.Assign.Update(ctx, r.id, value, e.Rev)
}

// renewed applies a round's results, on the loop.
func (st *state) renewed(round []renewal) {
	st.renewing = false
	for _, r := range round {
		if st.mine[r.id] != r.h {
			continue // released or lost meanwhile
		}
		switch {
		case r.err == nil:
			r.h.rev, r.h.renewedOK = r.rev, r.sent
		case errors.Is(r.err, ErrWrongRevision):
			st.lose(r.id, "lease lost")
		default:
			st.log.Debug("lease renewal failed", zap.String("camera", r.id), zap.Error(r.err))
		}
	}
	st.fence()
}

// fence stops the cameras whose lease was not renewed for FenceAfter: they
// stop before any other node may take the lease (LeaseTTL), and start again
// once a renewal succeeds.
func (st *state) fence() {
	for id, h := range st.mine {
		if h.recording && !st.busy[id] && !st.fresh(h) {
			st.log.Warn("lease not renewed, camera stopped until it is", zap.String("camera", id))
			st.stop(id, 0)
			h.recording = false
		}
	}
	st.publishHolding()
}

// lose forgets a lease someone else holds now and stops the camera.
func (st *state) lose(id, why string) {
	h := st.mine[id]
	delete(st.mine, id)
	if h != nil && h.recording && !st.busy[id] {
		st.log.Info("camera stopped: "+why, zap.String("camera", id))
		st.stop(id, 0)
	}
	st.publishHolding()
}

// release stops the camera, then deletes the lease so that the next holder
// takes it at once.
func (st *state) release(id, why string) {
	h := st.mine[id]
	if h == nil {
		return
	}
	st.log.Info("releasing camera: "+why, zap.String("camera", id))
	delete(st.mine, id)
	if !h.recording {
		st.stopThen(id, false, h.rev)
	} else {
		st.stop(id, h.rev)
	}
	st.publishHolding()
}

// stop stops a camera outside the loop; with deleteRev, it then deletes
// the lease at that revision.
func (st *state) stop(id string, deleteRev uint64) { st.stopThen(id, true, deleteRev) }

func (st *state) stopThen(id string, stop bool, deleteRev uint64) {
	st.busy[id] = true
	st.spawn(func() func() {
		if stop {
			st.cfg.Owners.Stop(id)
		}
		if deleteRev != 0 {
			ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
			_ = st.cfg.Assign.Delete(ctx, id, deleteRev)
			cancel()
		}
		return func() { delete(st.busy, id) }
	})
}

// drain runs the loop's pending work to its end, without starting more.
func (st *state) drain() {
	for st.pending > 0 {
		f := <-st.results
		st.pending--
		f()
	}
}

// leave stops every camera and releases the leases, all at once, then
// removes the heartbeat.
func (st *state) leave() {
	st.leaving = true
	st.drain() // takes under way end; those that succeeded are released below
	for id := range st.mine {
		st.release(id, "node leaving")
	}
	st.drain()
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	if !st.standingDown() {
		_ = st.cfg.Nodes.Delete(ctx, st.cfg.NodeID, 0)
	}
	st.publishHolding()
}

// retryError is a claim refused for now: the publisher should try again.
type retryError string

func (e retryError) Error() string { return string(e) + ", retry" }

func errRetry(msg string) error { return retryError(msg) }
