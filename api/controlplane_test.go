package api

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/status"
)

// hungStatus answers from st while up, and otherwise waits for the
// caller's context, as a NATS request does while the server is gone.
type hungStatus struct {
	up    bool
	calls int
}

func (h *hungStatus) GetStatus(ctx context.Context, cam string) (status.Status, bool, error) {
	h.calls++
	if h.up {
		return status.Status{Camera: cam, Code: status.Online}, true, nil
	}
	<-ctx.Done()
	return status.Status{}, false, ctx.Err()
}

// TestControlPlaneDown checks the bounds of the API's NATS reads: a read
// while NATS hangs gives up after cpReadTimeout and answers the last status
// read; the reads of the next cpRetry answer it without asking NATS; the
// first read after that asks again.
func TestControlPlaneDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cp := newControlPlane(nil)
		h := &hungStatus{up: true}
		g := guardedStatus{cp: cp, next: h}
		ctx := context.Background()
		if st, ok, err := g.GetStatus(ctx, "1"); err != nil || !ok || st.Code != status.Online {
			t.Fatalf("up: %v %v %v", st, ok, err)
		}
		h.up = false
		start := time.Now()
		st, ok, err := g.GetStatus(ctx, "1")
		if err != nil || !ok || st.Code != status.Online {
			t.Fatalf("down: %v %v %v, want the last status", st, ok, err)
		}
		if d := time.Since(start); d != cpReadTimeout {
			t.Fatalf("first read while down took %v, want %v", d, cpReadTimeout)
		}
		if _, ok, err := g.GetStatus(ctx, "2"); ok || err == nil {
			t.Fatalf("camera never read, while down: ok %v err %v, want an error", ok, err)
		}
		start = time.Now()
		for range 10 {
			g.GetStatus(ctx, "1")
		}
		if d := time.Since(start); d != 0 || h.calls != 2 {
			t.Fatalf("reads within cpRetry: %v, %d calls to NATS, want no wait and no call", d, h.calls)
		}
		time.Sleep(cpRetry)
		h.up = true
		g.GetStatus(ctx, "1")
		if h.calls != 3 {
			t.Fatalf("after cpRetry: %d calls, want NATS asked again", h.calls)
		}
	})
}

// failingRegistry fails every call at once, as the bus does while its
// connection is down; with hang set, its ping waits for the caller's
// context, as a request to a hung server does.
type failingRegistry struct {
	hang  bool
	pings int
}

var errNoNATS = errors.New("nats not connected")

func (f *failingRegistry) PutCamera(context.Context, camera.Config) error { return errNoNATS }
func (f *failingRegistry) DeleteCamera(context.Context, string) error     { return errNoNATS }
func (f *failingRegistry) GetCamera(context.Context, string) (camera.Config, bool, error) {
	return camera.Config{}, false, errNoNATS
}
func (f *failingRegistry) ListCameras(context.Context) ([]camera.Config, error) {
	return nil, errNoNATS
}
func (f *failingRegistry) Ping(ctx context.Context) error {
	f.pings++
	if f.hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return errNoNATS
}

// TestControlPlaneWritable checks that a write is refused with 503 when
// NATS does not answer its check: at once when the connection is down, after
// cpWriteTimeout when the server hangs, and then without asking again
// within cpRetry.
func TestControlPlaneWritable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cp := newControlPlane(nil)
		f := &failingRegistry{}
		reg := guardedRegistry{cp: cp, next: f}
		start := time.Now()
		for range 3 {
			if err := cp.writable(context.Background(), reg); err != errControlPlane {
				t.Fatalf("writable: %v, want errControlPlane", err)
			}
		}
		if d := time.Since(start); d != 0 || f.pings != 3 {
			t.Fatalf("connection down: %v, %d pings, want 3 answered at once", d, f.pings)
		}
		f.hang, f.pings = true, 0
		for range 3 {
			if err := cp.writable(context.Background(), reg); err != errControlPlane {
				t.Fatalf("writable: %v, want errControlPlane", err)
			}
		}
		if d := time.Since(start); d != cpWriteTimeout || f.pings != 1 {
			t.Fatalf("server hung: %v, %d pings, want one ping of %v", d, f.pings, cpWriteTimeout)
		}
		if err := reg.PutCamera(context.Background(), camera.Config{ID: "1"}); err != errControlPlane {
			t.Fatalf("put while down: %v, want errControlPlane", err)
		}
	})
}
