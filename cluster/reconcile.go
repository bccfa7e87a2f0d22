package cluster

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
)

// reconcile takes the cameras this node wins and releases those it no
// longer wins, once their winner is alive.
func (st *state) reconcile(ctx context.Context) {
	alive := st.alive()
	members := sortedMembers(alive)
	now := time.Now()
	for id, c := range st.cameras {
		if st.busy[id] {
			continue
		}
		win := winner(id, members)
		h := st.mine[id]
		if c.Blocked {
			if h != nil {
				st.release(ctx, id, "camera blocked")
			}
			continue
		}
		if isPush(c) {
			// A push camera belongs to the node its publisher reached
			// (Claim), not to the rendezvous winner.
			if h != nil && !h.recording && now.Sub(h.renewedOK) < st.cfg.FenceAfter {
				st.start(id, h)
			}
			continue
		}
		if h != nil {
			if win != st.cfg.NodeID && win != "" {
				st.release(ctx, id, "node "+win+" wins the camera")
			} else if !h.recording && now.Sub(h.renewedOK) < st.cfg.FenceAfter {
				st.start(id, h)
			}
			continue
		}
		if win != st.cfg.NodeID {
			continue
		}
		l, ok := st.leases[id]
		switch {
		case !ok:
			st.take(ctx, id, 0, true)
		case l.node == st.cfg.NodeID:
			st.take(ctx, id, l.rev, false) // ours from before a restart or a fence
		case !hasMember(alive, l.node) && now.Sub(l.seen) > st.cfg.LeaseTTL:
			st.take(ctx, id, l.rev, false)
		case now.Sub(l.seen) > st.cfg.LeaseTTL:
			st.take(ctx, id, l.rev, false) // holder alive but silent on this lease
		}
	}
	for id := range st.mine {
		if _, ok := st.cameras[id]; !ok && !st.busy[id] {
			st.release(ctx, id, "camera removed")
		}
	}
	st.publishHolding()
}

func hasMember(m map[string]member, id string) bool {
	_, ok := m[id]
	return ok
}

// take creates (rev 0) or takes over (compare-and-set on rev) the lease.
func (st *state) take(ctx context.Context, id string, rev uint64, create bool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var newRev uint64
	var err error
	sent := time.Now() // the lease counts from the request, not the answer
	if create {
		newRev, err = st.assign.Create(ctx, id, st.leaseValue())
	} else {
		newRev, err = st.assign.Update(ctx, id, st.leaseValue(), rev)
	}
	if err != nil {
		st.log.Debug("lease not taken", zap.String("camera", id), zap.Error(err))
		return
	}
	h := &held{rev: newRev, renewedOK: sent}
	st.mine[id] = h
	st.log.Info("lease taken", zap.String("camera", id))
	st.start(id, h)
}

func (st *state) start(id string, h *held) {
	c, ok := st.cameras[id]
	if !ok {
		return
	}
	if err := st.cfg.Start(c); err != nil {
		st.log.Warn("camera not started", zap.String("camera", id), zap.Error(err))
		return
	}
	h.recording = true
}

// renewal is one lease renewal of a round.
type renewal struct {
	id   string
	h    *held
	rev  uint64
	sent time.Time
	err  error
}

// renew renews every held lease, all at once and within half a renewal
// interval, so that a slow store never holds up fencing; a lease not
// renewed for FenceAfter is fenced: the camera stops before any other node
// may take it. A renewal counts from when it was sent: the other nodes see
// the lease renewed no earlier than that.
func (st *state) renew(ctx context.Context) {
	if !st.cfg.Bus.Conn().IsConnected() {
		st.fence()
		return
	}
	round := make([]renewal, 0, len(st.mine))
	for id, h := range st.mine {
		if !st.busy[id] {
			round = append(round, renewal{id: id, h: h, rev: h.rev})
		}
	}
	value := st.leaseValue()
	rctx, cancel := context.WithTimeout(ctx, st.cfg.RenewInterval/2)
	var wg sync.WaitGroup
	for i := range round {
		wg.Add(1)
		go func(r *renewal) {
			defer wg.Done()
			r.sent = time.Now()
			r.rev, r.err = st.assign.Update(rctx, r.id, value, r.rev)
		}(&round[i])
	}
	wg.Wait()
	cancel()
	for _, r := range round {
		if st.mine[r.id] != r.h {
			continue // released or lost meanwhile
		}
		if r.err == nil {
			r.h.rev, r.h.renewedOK = r.rev, r.sent
			continue
		}
		if isWrongRevision(r.err) {
			st.lose(r.id, "lease lost")
			continue
		}
		st.log.Debug("lease renewal failed", zap.String("camera", r.id), zap.Error(r.err))
	}
	st.fence()
}

// fence stops the cameras whose lease was not renewed for FenceAfter: they
// stop before any other node may take the lease (LeaseTTL), and start again
// once a renewal succeeds.
func (st *state) fence() {
	now := time.Now()
	for id, h := range st.mine {
		if h.recording && !st.busy[id] && now.Sub(h.renewedOK) > st.cfg.FenceAfter {
			st.log.Warn("lease not renewed, camera stopped until it is", zap.String("camera", id))
			st.stopAsync(id, nil)
			h.recording = false
		}
	}
	st.publishHolding()
}

// lose forgets a lease someone else holds now and stops the camera.
func (st *state) lose(id, why string) {
	h := st.mine[id]
	delete(st.mine, id)
	if h != nil && h.recording {
		st.log.Info("camera stopped: "+why, zap.String("camera", id))
		st.stopAsync(id, nil)
	}
	st.publishHolding()
}

// release stops the camera, then deletes the lease so its winner takes it.
func (st *state) release(ctx context.Context, id, why string) {
	h := st.mine[id]
	if h == nil {
		return
	}
	st.log.Info("releasing camera: "+why, zap.String("camera", id))
	rev := h.rev
	st.stopAsync(id, func() {
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = st.assign.Delete(dctx, id, jetstreamLastRevision(rev))
	})
	delete(st.mine, id)
}

// stopAsync stops a camera without blocking the loop, then runs after.
func (st *state) stopAsync(id string, after func()) {
	st.busy[id] = true
	go func() {
		st.cfg.Stop(id)
		if after != nil {
			after()
		}
		st.stops <- stopped{id: id}
	}()
}

// leave stops every camera and releases the leases, then removes the
// heartbeat.
func (st *state) leave() {
	done := make(chan struct{}, len(st.mine))
	n := 0
	for id, h := range st.mine {
		n++
		go func(id string, rev uint64, rec bool) {
			if rec {
				st.cfg.Stop(id)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = st.assign.Delete(ctx, id, jetstreamLastRevision(rev))
			done <- struct{}{}
		}(id, h.rev, h.recording)
	}
	for i := 0; i < n; i++ {
		<-done
	}
	// Wait for stops already running.
	for len(st.busy) > 0 {
		s := <-st.stops
		delete(st.busy, s.id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = st.nodes.Delete(ctx, st.cfg.NodeID)
	st.mine = map[string]*held{}
	st.publishHolding()
}
