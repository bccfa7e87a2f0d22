package cluster

import (
	"context"
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
