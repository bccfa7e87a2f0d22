package cluster

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// severed is a node's view of a bucket behind a link that can be cut: once
// cut, every request fails and the watch ends; a new watch starts only
// once the link is back.
type severed struct {
	cut
}

func (s severed) Watch(ctx context.Context) (<-chan Entry, error) {
	if s.off.Load() {
		return nil, errInjected
	}
	ctx, cancel := context.WithCancel(ctx)
	ch, err := s.Bucket.Watch(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	go func() {
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if s.off.Load() {
					cancel()
					return
				}
			}
		}
	}()
	return ch, nil
}

// link returns a tweak that puts a node behind a link cut while off is
// set: no request, no watch, and Connected false.
func link(off *atomic.Bool) func(*Config) {
	return func(c *Config) {
		c.Cameras = severed{cut{c.Cameras, off}}
		c.Nodes = severed{cut{c.Nodes, off}}
		c.Assign = severed{cut{c.Assign, off}}
		c.Connected = func() bool { return !off.Load() }
	}
}

// duplicates collects a node's OnDuplicate reports.
type duplicates struct {
	mu sync.Mutex
	d  map[string]time.Duration
	n  int
}

func (d *duplicates) tweak(c *Config) {
	c.OnDuplicate = func(id string, dur time.Duration) {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.d == nil {
			d.d = map[string]time.Duration{}
		}
		d.d[id] += dur
		d.n++
	}
}

func (d *duplicates) get(id string) (time.Duration, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.d[id], d.n
}

// A node whose heartbeats cannot be stored (the nodes bucket lost its
// leader) keeps its cameras however long that lasts.
func TestHeartbeatFailuresKeepTheCameras(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.putCamera(rtsp("c1"))
		w.putCamera(rtsp("c2"))
		w.start("a")
		settle(2 * time.Second)
		w.nodes.setFaults(nil, func(op, key string) (bool, error) {
			if op == "put" {
				return false, errInjected
			}
			return true, nil
		})
		settle(60 * time.Second)
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Errorf("cameras stopped while heartbeats failed: %v", s)
		}
		w.nodes.setFaults(nil, nil)
		settle(5 * time.Second)
		for _, id := range []string{"c1", "c2"} {
			if n := w.fleet.recorded("a")[id]; n != 1 {
				t.Errorf("%s recorded %d times, want once, without interruption", id, n)
			}
		}
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Errorf("cameras stopped after heartbeats came back: %v", s)
		}
	})
}

// Every node cut from NATS for 60 s (all servers down or hung): every
// camera goes on recording where it was, and when NATS returns no node
// takes a camera from another, though none saw the others for a minute.
func TestOutageOfAllKeepsRecording(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		ids := append(wins("a", []string{"a", "b"}, 3), wins("b", []string{"a", "b"}, 3)...)
		for _, id := range ids {
			w.putCamera(rtsp(id))
		}
		var off atomic.Bool
		w.start("a", link(&off))
		w.start("b", link(&off))
		settle(3 * time.Second)
		before := map[string]string{}
		for _, id := range ids {
			before[id] = w.fleet.recorder(id)
			if before[id] == "" {
				t.Fatalf("%s not recorded", id)
			}
		}
		rev := w.assign.revision()
		off.Store(true)
		settle(60 * time.Second)
		for _, node := range []string{"a", "b"} {
			if s := w.fleet.stopped(node); len(s) != 0 {
				t.Errorf("%s stopped %v during the outage", node, s)
			}
		}
		off.Store(false)
		settle(15 * time.Second)
		for _, id := range ids {
			if got := w.fleet.recorder(id); got != before[id] {
				t.Errorf("%s recorded by %q after the outage, want %q", id, got, before[id])
			}
		}
		for _, node := range []string{"a", "b"} {
			if s := w.fleet.stopped(node); len(s) != 0 {
				t.Errorf("%s stopped %v after the outage", node, s)
			}
			for id, n := range w.fleet.recorded(node) {
				if n != 1 {
					t.Errorf("%s told to record %s %d times, want once", node, id, n)
				}
			}
		}
		if o := w.fleet.overlapsSeen(); len(o) > 0 {
			t.Errorf("overlap: %v", o)
		}
		if d := w.assign.revision() - rev; d != 0 {
			t.Errorf("%d lease writes across the outage, want none", d)
		}
	})
}

// A node cut from NATS records on; the camera is taken meanwhile by the
// node the placement gives it to. When the link is back, the cut node
// learns it and stops within a second; the overlap is reported.
func TestReconnectFindsTheCameraTakenByItsWinner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		id := wins("b", []string{"a", "b"}, 1)[0]
		w.putCamera(rtsp(id))
		var off atomic.Bool
		var dup duplicates
		w.start("a", link(&off), dup.tweak)
		settle(2 * time.Second)
		if w.fleet.recorder(id) != "a" {
			t.Fatalf("%s recorded by %q, want a", id, w.fleet.recorder(id))
		}
		off.Store(true)
		w.start("b")
		settle(60 * time.Second)
		if _, ok := w.fleet.lastRecord("b", id); !ok {
			t.Fatalf("%s not taken by b while a was cut off", id)
		}
		taken, _ := w.fleet.lastRecord("b", id)
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Fatalf("a stopped %v while cut off", s)
		}
		off.Store(false)
		back := time.Now()
		settle(5 * time.Second)
		stopAt, ok := w.fleet.stopAt["a/"+id]
		if !ok {
			t.Fatalf("a did not stop %s after learning b holds it", id)
		}
		if d := stopAt.Sub(back); d > time.Second {
			t.Errorf("a stopped %s %v after the link came back, want within 1 s", id, d)
		}
		if got := w.fleet.recorder(id); got != "b" {
			t.Errorf("%s recorded by %q, want b", id, got)
		}
		d, n := dup.get(id)
		if want := stopAt.Sub(taken.at); n != 1 || d < want-time.Second || d > want+time.Second {
			t.Errorf("duplicate recording reported %v in %d reports, want about %v once", d, n, want)
		}
	})
}

// A node cut from NATS records on while another node takes its camera.
// When the link is back the cut node, which the placement gives the camera
// to, never stops: the other node hands the camera back within two seconds
// and the cut node writes its lease again.
func TestReconnectWinnerKeepsRecording(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		ids := wins("a", []string{"a", "b"}, 3)
		for _, id := range ids {
			w.putCamera(rtsp(id))
		}
		var off atomic.Bool
		var dup duplicates
		w.start("a", link(&off), dup.tweak)
		w.start("b")
		settle(3 * time.Second)
		off.Store(true)
		settle(60 * time.Second)
		for _, id := range ids {
			if l, _ := w.lease(id); l.Node != "b" {
				t.Fatalf("lease of %s held by %q while a was cut off, want b", id, l.Node)
			}
		}
		off.Store(false)
		back := time.Now()
		settle(10 * time.Second)
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Errorf("a stopped %v: the camera's winner must record on", s)
		}
		for _, id := range ids {
			if n := w.fleet.recorded("a")[id]; n != 1 {
				t.Errorf("a told to record %s %d times, want once", id, n)
			}
			stopAt, ok := w.fleet.stopAt["b/"+id]
			if !ok {
				t.Errorf("b still records %s", id)
				continue
			}
			if d := stopAt.Sub(back); d > 2*time.Second {
				t.Errorf("b stopped %s %v after the link came back, want within 2 s", id, d)
			}
			if l, _ := w.lease(id); l.Node != "a" || l.Instance == "" {
				t.Errorf("lease of %s: %+v, want a's again", id, l)
			}
			if d, _ := dup.get(id); d < 50*time.Second || d > 65*time.Second {
				t.Errorf("duplicate recording of %s reported %v, want about 56 s", id, d)
			}
		}
		if !slices.Equal(w.fleet.stopped("b"), w.fleet.stopped("b")) {
			t.Fatal("unreachable")
		}
	})
}

// A lease deleted by someone else while its camera records is written
// again; the camera does not stop.
func TestDeletedLeaseWrittenAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.putCamera(rtsp("c1"))
		w.start("a")
		settle(2 * time.Second)
		if err := w.assign.Delete(context.Background(), "c1", 0); err != nil {
			t.Fatal(err)
		}
		settle(2 * time.Second)
		if l, ok := w.lease("c1"); !ok || l.Node != "a" {
			t.Errorf("lease of c1 after its deletion: %+v, %v; want a's again", l, ok)
		}
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Errorf("a stopped %v after its lease was deleted", s)
		}
	})
}

// The node's own heartbeat expires from the nodes bucket (bus.NodeTTL)
// while it is cut off, so the first watch after the outage finds it
// missing. The node does not forget itself: it wins its cameras back and
// records on, and the node that took them meanwhile hands them back.
func TestReconnectAfterOwnHeartbeatExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		ids := wins("a", []string{"a", "b"}, 3)
		for _, id := range ids {
			w.putCamera(rtsp(id))
		}
		var off atomic.Bool
		w.start("a", link(&off))
		w.start("b")
		settle(3 * time.Second)
		off.Store(true)
		settle(20 * time.Second)
		if err := w.nodes.Delete(context.Background(), "a", 0); err != nil {
			t.Fatal(err)
		}
		settle(2 * time.Second)
		off.Store(false)
		settle(10 * time.Second)
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Errorf("a stopped %v after its heartbeat expired while cut off: the camera's winner must record on", s)
		}
		for _, id := range ids {
			if _, ok := w.fleet.stopAt["b/"+id]; !ok {
				t.Errorf("b still records %s", id)
			}
		}
	})
}

// A node that records a dead node's camera keeps it when it reconnects
// after an outage of its own. Every node it knew then counts as seen (it
// could not see them meanwhile), the dead one too, whose last heartbeat is
// still in the bucket, and the placement gives the camera back to it; but
// a camera is handed only to a node whose heartbeat is seen changing, so
// it is not stopped for a node that cannot take it.
func TestReconnectKeepsTheCameraOfADeadWinner(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		id := wins("b", []string{"a", "b"}, 1)[0]
		w.putCamera(rtsp(id))
		var dead, off atomic.Bool
		nb := w.start("b", cutOff(&dead))
		w.start("a", link(&off))
		settle(2 * time.Second)
		if w.fleet.recorder(id) != "b" {
			t.Fatalf("%s recorded by %q, want b", id, w.fleet.recorder(id))
		}
		// b dies without a word: its last heartbeat stays in the bucket.
		dead.Store(true)
		nb.Close()
		settle(10 * time.Second)
		if w.fleet.recorder(id) != "a" {
			t.Fatalf("%s recorded by %q after b died, want a", id, w.fleet.recorder(id))
		}
		off.Store(true)
		settle(5 * time.Second)
		off.Store(false)
		settle(10 * time.Second)
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Errorf("a stopped %v after its outage, for a node dead since before it", s)
		}
		if got := w.fleet.recorder(id); got != "a" {
			t.Errorf("%s recorded by %q, want a", id, got)
		}
	})
}
