package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/status"
)

// What the API does while NATS (the control plane) is unreachable: the
// operations that need only the database and storage (listings, recordings,
// playlists, thumbnails, snapshots stored) answer as usual; the camera
// status they show is the last one read from NATS, or OFFLINE when none was
// read since the server started; live URLs are given only for cameras this
// node records; writes that need the registry answer 503 at once.
const (
	// cpReadTimeout bounds one read of NATS made for a request (a camera's
	// status, its lease).
	cpReadTimeout = time.Second
	// cpWriteTimeout bounds a registry write and the check made before a
	// camera is saved.
	cpWriteTimeout = 2 * time.Second
	// cpRetry is how long, after a NATS call timed out, the API answers
	// without asking NATS; the next call after it tries again.
	cpRetry = 2 * time.Second
)

// errControlPlane answers a write that needs the camera registry while
// NATS does not answer.
var errControlPlane = fail(http.StatusServiceUnavailable,
	"the camera registry (NATS) is unreachable: nothing was saved; try again when NATS is back")

// pinger is implemented by a registry that can check its connection
// (*bus.Bus): the check fails at once while the connection is down.
type pinger interface {
	Ping(ctx context.Context) error
}

// controlPlane remembers whether NATS answered lately and the last status
// read of each camera. It is shared by the wrappers of the server's NATS
// integrations, so one failed call spares the others of a request (a
// listing of many cameras) their timeouts.
type controlPlane struct {
	now func() time.Time

	mu        sync.Mutex
	downUntil time.Time
	statuses  map[string]status.Status
}

func newControlPlane(now func() time.Time) *controlPlane {
	if now == nil {
		now = time.Now
	}
	return &controlPlane{now: now, statuses: map[string]status.Status{}}
}

// down reports whether a NATS call timed out less than cpRetry ago.
func (c *controlPlane) down() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now().Before(c.downUntil)
}

// failed notes a timed-out NATS call.
func (c *controlPlane) failed() {
	c.mu.Lock()
	c.downUntil = c.now().Add(cpRetry)
	c.mu.Unlock()
}

// answered notes a NATS call that answered.
func (c *controlPlane) answered() {
	c.mu.Lock()
	c.downUntil = time.Time{}
	c.mu.Unlock()
}

// call runs f with a context bounded by d, unless NATS timed out lately.
// f outlasting d marks NATS down (a request to a server that is gone or
// hung waits for its context); an error f returns at once does not: NATS
// answered it, or the connection is known to be down and every call fails
// as fast.
func (c *controlPlane) call(ctx context.Context, d time.Duration, f func(context.Context) error) error {
	if c.down() {
		return errControlPlane
	}
	tctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := f(tctx)
	switch {
	case ctx.Err() != nil:
		// The caller went away: says nothing of NATS.
	case tctx.Err() != nil:
		c.failed()
	case err == nil:
		c.answered()
	}
	if err == nil && tctx.Err() != nil {
		err = tctx.Err()
	}
	return err
}

// writable checks, before a write that ends in the registry, that NATS
// answers; errControlPlane otherwise.
func (c *controlPlane) writable(ctx context.Context, reg Registry) error {
	p, ok := reg.(pinger)
	if !ok {
		return nil
	}
	if err := c.call(ctx, cpWriteTimeout, p.Ping); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errControlPlane
	}
	return nil
}

// guardedStatus reads statuses through the control plane, keeping the last
// one read of each camera and answering it while NATS is down.
type guardedStatus struct {
	cp   *controlPlane
	next StatusReader
}

func (g guardedStatus) GetStatus(ctx context.Context, cam string) (status.Status, bool, error) {
	var (
		st status.Status
		ok bool
	)
	err := g.cp.call(ctx, cpReadTimeout, func(ctx context.Context) error {
		var err error
		st, ok, err = g.next.GetStatus(ctx, cam)
		return err
	})
	g.cp.mu.Lock()
	defer g.cp.mu.Unlock()
	if err != nil {
		if last, had := g.cp.statuses[cam]; had {
			return last, true, nil
		}
		return status.Status{}, false, err
	}
	if ok {
		g.cp.statuses[cam] = st
	} else {
		delete(g.cp.statuses, cam)
	}
	return st, ok, nil
}

// guardedLive asks for live URLs through the control plane. While NATS is
// down it still asks, with a context already ended: a camera this node
// records gets its URL (that needs no NATS), the others none.
type guardedLive struct {
	cp   *controlPlane
	next LiveURLs
}

func (g guardedLive) LiveURLs(ctx context.Context, cam string, hls bool, exp time.Time) (string, string, error) {
	var live, server string
	err := g.cp.call(ctx, cpReadTimeout, func(ctx context.Context) error {
		var err error
		live, server, err = g.next.LiveURLs(ctx, cam, hls, exp)
		return err
	})
	if errors.Is(err, errControlPlane) {
		ended, cancel := context.WithCancel(ctx)
		cancel()
		return g.next.LiveURLs(ended, cam, hls, exp)
	}
	return live, server, err
}

// guardedRegistry bounds the registry's calls and answers errControlPlane
// at once while NATS is down.
type guardedRegistry struct {
	cp   *controlPlane
	next Registry
}

func (g guardedRegistry) PutCamera(ctx context.Context, c camera.Config) error {
	return g.write(ctx, "register camera "+c.ID, func(ctx context.Context) error { return g.next.PutCamera(ctx, c) })
}

func (g guardedRegistry) DeleteCamera(ctx context.Context, id string) error {
	return g.write(ctx, "unregister camera "+id, func(ctx context.Context) error { return g.next.DeleteCamera(ctx, id) })
}

func (g guardedRegistry) write(ctx context.Context, what string, f func(context.Context) error) error {
	if err := g.cp.call(ctx, cpWriteTimeout, f); err != nil {
		if errors.Is(err, errControlPlane) {
			return err
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// GetCamera and ListCameras serve the registry repair, which runs in the
// background with bounds of its own: they go straight to the registry.
func (g guardedRegistry) GetCamera(ctx context.Context, id string) (camera.Config, bool, error) {
	return g.next.GetCamera(ctx, id)
}

func (g guardedRegistry) ListCameras(ctx context.Context) ([]camera.Config, error) {
	return g.next.ListCameras(ctx)
}

// Ping lets writable check the wrapped registry.
func (g guardedRegistry) Ping(ctx context.Context) error {
	if p, ok := g.next.(pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}
