package cluster

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// stalling is a node's view of a bucket whose watch can stall while every
// request is answered, as a JetStream watch does when the server holding
// its consumer dies: the changes are held, and delivered in order once the
// stall ends.
type stalling struct {
	Bucket
	stalled *atomic.Bool
}

func (s stalling) Watch(ctx context.Context) (<-chan Entry, error) {
	in, err := s.Bucket.Watch(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan Entry)
	go func() {
		defer close(out)
		for e := range in {
			for s.stalled.Load() {
				select {
				case <-ctx.Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
			select {
			case out <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// A node whose watch of the nodes bucket stalls, while its own heartbeats
// are stored, sees the other nodes' heartbeats stop changing: that is no
// sign of their death, and it takes none of their cameras. When the watch
// delivers again, nothing has changed hands.
func TestStalledNodesWatchTakesNoCamera(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		members := []string{"a", "b"}
		ids := append(wins("a", members, 3), wins("b", members, 3)...)
		for _, id := range ids {
			w.putCamera(rtsp(id))
		}
		var stalled atomic.Bool
		w.start("a")
		w.start("b", func(c *Config) { c.Nodes = stalling{c.Nodes, &stalled} })
		settle(3 * time.Second)
		before := map[string]string{}
		for _, id := range ids {
			if before[id] = w.fleet.recorder(id); before[id] == "" {
				t.Fatalf("%s not recorded", id)
			}
		}
		rev := w.assign.revision()
		stalled.Store(true)
		settle(30 * time.Second)
		stalled.Store(false)
		settle(10 * time.Second)
		if o := w.fleet.overlapsSeen(); len(o) > 0 {
			t.Errorf("two nodes recorded one camera: %v", o)
		}
		for _, node := range members {
			if s := w.fleet.stopped(node); len(s) != 0 {
				t.Errorf("%s stopped %v", node, s)
			}
		}
		for _, id := range ids {
			if got := w.fleet.recorder(id); got != before[id] {
				t.Errorf("%s recorded by %q, want %q", id, got, before[id])
			}
		}
		if d := w.assign.revision() - rev; d != 0 {
			t.Errorf("%d lease writes while b's watch stalled, want none", d)
		}
	})
}

// A node whose watch of the nodes bucket stalls still takes the cameras of
// a node that died meanwhile, once its watch delivers again.
func TestStalledNodesWatchThenFailover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		members := []string{"a", "b"}
		ids := wins("a", members, 3)
		for _, id := range ids {
			w.putCamera(rtsp(id))
		}
		var stalled, dead atomic.Bool
		w.start("a", cutOff(&dead))
		w.start("b", func(c *Config) { c.Nodes = stalling{c.Nodes, &stalled} })
		settle(3 * time.Second)
		stalled.Store(true)
		dead.Store(true) // a's heartbeats are no longer stored
		settle(20 * time.Second)
		for _, id := range ids {
			if _, ok := w.fleet.lastRecord("b", id); ok {
				t.Errorf("b took %s while its watch stalled", id)
			}
		}
		stalled.Store(false)
		settle(10 * time.Second)
		for _, id := range ids {
			if _, ok := w.fleet.lastRecord("b", id); !ok {
				t.Errorf("b did not take %s of the dead node once its watch delivered", id)
			}
		}
	})
}

// stuck is a node's view of a bucket whose watches stop delivering for
// good on stick, as one whose consumer's server died; a watch started
// after that delivers.
type stuck struct {
	Bucket
	w *watches
}

// watches are the watches of a stuck bucket.
type watches struct {
	mu     sync.Mutex
	dead   []*atomic.Bool
	future bool // watches started from now on stick once they delivered the current entries
}

// stick makes every watch started so far deliver nothing more.
func (ws *watches) stick() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, d := range ws.dead {
		d.Store(true)
	}
}

// stickAll makes every watch started so far deliver nothing more, and
// every watch started from now on nothing after the current entries.
func (ws *watches) stickAll() {
	ws.stick()
	ws.mu.Lock()
	ws.future = true
	ws.mu.Unlock()
}

func (s stuck) Watch(ctx context.Context) (<-chan Entry, error) {
	in, err := s.Bucket.Watch(ctx)
	if err != nil {
		return nil, err
	}
	dead := new(atomic.Bool)
	s.w.mu.Lock()
	s.w.dead = append(s.w.dead, dead)
	future := s.w.future
	s.w.mu.Unlock()
	out := make(chan Entry)
	go func() {
		defer close(out)
		for e := range in {
			if dead.Load() {
				continue // never delivered
			}
			select {
			case out <- e:
			case <-ctx.Done():
				return
			}
			if future && e.Key == "" {
				dead.Store(true)
			}
		}
	}()
	return out, nil
}

// A nodes watch that delivers nothing more, while the node's heartbeats are
// stored, is started again: the node then sees the others as they are, and
// takes the cameras of a node that died within seconds, not never.
func TestLaggingNodesWatchStartedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		members := []string{"a", "b"}
		ids := wins("a", members, 3)
		for _, id := range ids {
			w.putCamera(rtsp(id))
		}
		var dead atomic.Bool
		var ws watches
		w.start("a", cutOff(&dead))
		w.start("b", func(c *Config) { c.Nodes = stuck{c.Nodes, &ws} })
		settle(3 * time.Second)
		ws.stick()
		settle(2 * time.Second)
		dead.Store(true)
		if err := w.nodes.Delete(context.Background(), "a", 0); err != nil {
			t.Fatal(err) // a's heartbeat expires
		}
		died := time.Now()
		settle(20 * time.Second)
		for _, id := range ids {
			r, ok := w.fleet.lastRecord("b", id)
			if !ok {
				t.Errorf("b did not take %s of the dead node", id)
				continue
			}
			if d := r.at.Sub(died); d > 12*time.Second {
				t.Errorf("b took %s %v after a died, want within 12 s", id, d)
			}
		}
	})
}

// A node cut from NATS comes back while the node that took its cameras
// has a nodes watch that delivers nothing. That node cannot see the cut
// node's heartbeat, so hands nothing back until its watch is started
// again; the cut node, which the placement gives the cameras to, records
// on meanwhile, and no camera stops on it.
func TestReconnectWhileTakersWatchLags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		ids := wins("a", []string{"a", "b"}, 3)
		for _, id := range ids {
			w.putCamera(rtsp(id))
		}
		var off atomic.Bool
		var ws watches
		w.start("a", link(&off))
		w.start("b", func(c *Config) { c.Nodes = stuck{c.Nodes, &ws} })
		settle(3 * time.Second)
		off.Store(true)
		settle(30 * time.Second)
		for _, id := range ids {
			if l, _ := w.lease(id); l.Node != "b" {
				t.Fatalf("lease of %s held by %q while a was cut off, want b", id, l.Node)
			}
		}
		ws.stick()
		off.Store(false)
		settle(20 * time.Second)
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Errorf("a stopped %v: the camera's winner must record on", s)
		}
		for _, id := range ids {
			if _, ok := w.fleet.stopAt["b/"+id]; !ok {
				t.Errorf("b still records %s", id)
			}
			if l, _ := w.lease(id); l.Node != "a" {
				t.Errorf("lease of %s: %+v, want a's again", id, l)
			}
		}
	})
}

// blindTo is a node's view of a bucket whose watch never delivers one key.
type blindTo struct {
	Bucket
	key string
}

func (b blindTo) Watch(ctx context.Context) (<-chan Entry, error) {
	in, err := b.Bucket.Watch(ctx)
	if err != nil {
		return nil, err
	}
	out := make(chan Entry)
	go func() {
		defer close(out)
		for e := range in {
			if e.Key == b.key {
				continue
			}
			select {
			case out <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

// A holder that never hands a contested camera back (it never sees the
// node the placement gives it to) wins after handBack: the contesting node
// stops the camera then, not sooner, and reports the double recording.
func TestContestedCameraNotHandedBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		id := wins("a", []string{"a", "b"}, 1)[0]
		w.putCamera(rtsp(id))
		var off atomic.Bool
		var dup duplicates
		w.start("a", link(&off), dup.tweak)
		settle(2 * time.Second)
		w.start("b", func(c *Config) { c.Nodes = blindTo{c.Nodes, "a"} })
		off.Store(true)
		settle(20 * time.Second)
		if l, _ := w.lease(id); l.Node != "b" {
			t.Fatalf("lease of %s held by %q while a was cut off, want b", id, l.Node)
		}
		off.Store(false)
		back := time.Now()
		settle(30 * time.Second)
		stopAt, ok := w.fleet.stopAt["a/"+id]
		if !ok {
			t.Fatalf("a still records %s, which b never hands back", id)
		}
		hb := DefaultLeaseTTL + 2*DefaultHeartbeat + DefaultNodeTimeout
		if d := stopAt.Sub(back); d < hb || d > hb+2*time.Second {
			t.Errorf("a stopped %s %v after the link came back, want %v to %v", id, d, hb, hb+2*time.Second)
		}
		if _, n := dup.get(id); n != 1 {
			t.Errorf("%d duplicate reports, want 1", n)
		}
		if got := w.fleet.recorder(id); got != "b" {
			t.Errorf("%s recorded by %q, want b", id, got)
		}
	})
}

// A node cut from NATS comes back, and the node that took its cameras
// hands them back by deleting their leases, but the returning node's watch
// of assign delivers nothing. It reads the leases of the cameras it
// contests, finds them free, and writes them again: no camera stops.
func TestHandedBackWhileAssignWatchLags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		ids := wins("a", []string{"a", "b"}, 3)
		for _, id := range ids {
			w.putCamera(rtsp(id))
		}
		var off atomic.Bool
		var ws watches
		w.start("a", link(&off), func(c *Config) { c.Assign = stuck{c.Assign, &ws} })
		w.start("b")
		settle(3 * time.Second)
		off.Store(true)
		settle(30 * time.Second)
		ws.stickAll()
		off.Store(false)
		settle(30 * time.Second)
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Errorf("a stopped %v: the camera's winner must record on", s)
		}
		for _, id := range ids {
			if _, ok := w.fleet.stopAt["b/"+id]; !ok {
				t.Errorf("b still records %s", id)
			}
			if l, _ := w.lease(id); l.Node != "a" {
				t.Errorf("lease of %s: %+v, want a's again", id, l)
			}
		}
	})
}

// A node that wins a camera held by another live node waits for it to be
// handed back. When its watch of assign does not show the lease deleted,
// it reads the lease and takes the camera all the same, within seconds.
func TestHandoverWhileAssignWatchLags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		ids := wins("a", []string{"a", "b"}, 3)
		for _, id := range ids {
			w.putCamera(rtsp(id))
		}
		w.start("b")
		settle(3 * time.Second)
		var ws watches
		ws.stickAll()
		w.start("a", func(c *Config) { c.Assign = stuck{c.Assign, &ws} })
		settle(15 * time.Second)
		for _, id := range ids {
			stopAt, ok := w.fleet.stopAt["b/"+id]
			if !ok {
				t.Errorf("b still records %s", id)
				continue
			}
			r, ok := w.fleet.lastRecord("a", id)
			if !ok {
				t.Errorf("a did not take %s, handed over by b", id)
				continue
			}
			if d := r.at.Sub(stopAt); d > 3*time.Second {
				t.Errorf("a took %s %v after b stopped it, want within 3 s", id, d)
			}
		}
	})
}

// A node that waits for a camera's holder to hand it back, reading the
// lease meanwhile, still takes it when the holder dies instead.
func TestAwaitedHolderDies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		ids := wins("a", []string{"a", "b"}, 3)
		for _, id := range ids {
			w.putCamera(rtsp(id))
		}
		var dead atomic.Bool
		w.start("b", cutOff(&dead))
		settle(3 * time.Second)
		dead.Store(true)
		died := time.Now()
		w.start("a")
		settle(15 * time.Second)
		for _, id := range ids {
			r, ok := w.fleet.lastRecord("a", id)
			if !ok {
				t.Errorf("a did not take %s of the dead node", id)
				continue
			}
			if d := r.at.Sub(died); d > 8*time.Second {
				t.Errorf("a took %s %v after b died, want within 8 s", id, d)
			}
		}
	})
}
