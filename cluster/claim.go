package cluster

import (
	"fmt"

	"github.com/vigia/vigia/camera"
)

// isPush reports whether c is an RTMP camera that pushes to the cluster
// (no source URL to pull).
func isPush(c camera.Config) bool {
	return c.ConnectionType == camera.RTMP && c.SealedURL == ""
}

type claimReq struct {
	id   string
	done chan error
}

// claimAttempts bounds the takes of one claim: the first from the
// watcher's view of the lease, the others from the store's.
const claimAttempts = 3

// claim runs on the loop. A camera this node holds is recorded at once
// only while its lease is fresh and no stop of it is under way; otherwise
// the publisher is told to retry.
func (st *state) claim(req claimReq) {
	id := req.id
	c, ok := st.cameras[id]
	switch {
	case st.leaving:
		req.done <- ErrClosed
		return
	case st.standingDown():
		req.done <- st.err()
		return
	case !ok:
		req.done <- fmt.Errorf("camera %s is not registered", id)
		return
	case !isPush(c):
		req.done <- ErrNotPush
		return
	case c.Blocked:
		req.done <- fmt.Errorf("camera %s is blocked", id)
		return
	case st.busy[id]:
		req.done <- errRetry("camera " + id + " is stopping")
		return
	}
	if waiters, taking := st.taking[id]; taking {
		st.taking[id] = append(waiters, req.done)
		return
	}
	if h := st.mine[id]; h != nil {
		switch {
		case h.recording:
			req.done <- nil
		case !st.fresh():
			req.done <- errRetry("leases of this node not renewed")
		default:
			st.record(id, h)
			req.done <- nil
		}
		return
	}
	l, exists := st.leases[id]
	st.take(id, l.rev, !exists, claimAttempts)
	st.taking[id] = append(st.taking[id], req.done)
}
