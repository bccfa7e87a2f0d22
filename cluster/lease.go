package cluster

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/status"
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
	h := &held{epoch: rev, rev: rev}
	st.mine[id] = h
	st.log.Info("lease taken", zap.String("camera", id), zap.Uint64("epoch", rev))
	if st.leaving || st.standingDown() {
		reply(ErrClosed)
		return
	}
	c, ok := st.cameras[id]
	switch {
	case !ok || c.Blocked:
		cause := status.CauseCameraRemoved
		if ok {
			cause = status.CauseCameraBlocked
		}
		st.release(id, cause, "camera removed or blocked while its lease was taken")
		reply(errRetry("camera " + id + " removed or blocked"))
		return
	}
	st.record(id, h)
	reply(nil)
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

// fresh reports whether this process's leases are alive: a heartbeat sent
// within FenceAfter was stored.
func (st *state) fresh() bool {
	return time.Since(st.renewedOK) < st.cfg.FenceAfter
}

// lose forgets a lease someone else holds now and stops the camera.
func (st *state) lose(id, why string) {
	h := st.mine[id]
	delete(st.mine, id)
	if h != nil && h.recording && !st.busy[id] {
		st.log.Info("camera stopped: "+why, zap.String("camera", id))
		st.stop(id, status.CauseNodeHandover, 0)
	}
}

// release stops the camera for cause, then deletes the lease so that the
// next holder takes it at once.
func (st *state) release(id string, cause status.Cause, why string) {
	h := st.mine[id]
	if h == nil {
		return
	}
	st.log.Info("releasing camera: "+why, zap.String("camera", id))
	delete(st.mine, id)
	if !h.recording {
		st.stopThen(id, false, cause, h.rev)
	} else {
		st.stop(id, cause, h.rev)
	}
}

// stop stops a camera for cause outside the loop; with deleteRev, it then
// deletes the lease at that revision.
func (st *state) stop(id string, cause status.Cause, deleteRev uint64) {
	st.stopThen(id, true, cause, deleteRev)
}

func (st *state) stopThen(id string, stop bool, cause status.Cause, deleteRev uint64) {
	st.busy[id] = true
	st.spawn(func() func() {
		if stop {
			st.cfg.Owners.Stop(id, cause)
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
		st.release(id, status.CauseNodeHandover, "node leaving")
	}
	st.drain()
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	if !st.standingDown() {
		_ = st.cfg.Nodes.Delete(ctx, st.cfg.NodeID, 0)
	}
}

// retryError is a claim refused for now: the publisher should try again.
type retryError string

func (e retryError) Error() string { return string(e) + ", retry" }

func errRetry(msg string) error { return retryError(msg) }
