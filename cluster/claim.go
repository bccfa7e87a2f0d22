package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigia/vigia/camera"
)

// ErrNotPush is returned by Claim for a camera that is not an RTMP push
// camera.
var ErrNotPush = errors.New("not an rtmp push camera")

// isPush reports whether c is an RTMP camera that pushes to the cluster
// (no source URL to pull).
func isPush(c camera.Config) bool {
	return c.ConnectionType == camera.RTMP && c.SealedURL == ""
}

type claimReq struct {
	id   string
	done chan error
}

// Claim takes the lease of push camera id for this node, because its
// publisher connected here, and starts recording it. The node that held it
// sees the lease taken and stops.
func (n *Node) Claim(ctx context.Context, id string) error {
	if n.state == nil {
		return ErrClosed
	}
	req := claimReq{id: id, done: make(chan error, 1)}
	select {
	case n.state.claims <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-n.done:
		return ErrClosed
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// claimAttempts bounds the takes of one claim: the first from the
// watcher's view of the lease, the others from the store's.
const claimAttempts = 3

// currentLease reads id's lease from the store: its revision, and whether
// it exists.
func (st *state) currentLease(ctx context.Context, id string) (uint64, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	e, err := st.assign.Get(ctx, id)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	}
	return e.Revision(), true, nil
}

// claim runs in the loop goroutine.
func (st *state) claim(ctx context.Context, id string) error {
	c, ok := st.cameras[id]
	if !ok {
		return fmt.Errorf("camera %s is not registered", id)
	}
	if !isPush(c) {
		return ErrNotPush
	}
	if c.Blocked {
		return fmt.Errorf("camera %s is blocked", id)
	}
	if h := st.mine[id]; h != nil {
		if !h.recording {
			st.start(id, h)
		}
		return nil
	}
	if st.busy[id] {
		return fmt.Errorf("camera %s is stopping, retry", id)
	}
	l, exists := st.leases[id]
	rev := l.rev
	for attempt := 0; ; attempt++ {
		st.take(ctx, id, rev, !exists)
		if st.mine[id] != nil || attempt == claimAttempts-1 {
			break
		}
		// The watcher's view may lag the store (the holder renewed the
		// lease meanwhile, or released it): read the lease as it is now
		// and try again.
		var err error
		if rev, exists, err = st.currentLease(ctx, id); err != nil {
			return fmt.Errorf("lease of camera %s: %w", id, err)
		}
	}
	if h := st.mine[id]; h == nil || !h.recording {
		return fmt.Errorf("lease of camera %s not taken, retry", id)
	}
	st.publishHolding()
	return nil
}
