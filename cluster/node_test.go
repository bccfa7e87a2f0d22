package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestTakeAndRenew(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		for _, id := range []string{"c1", "c2", "c3"} {
			w.putCamera(rtsp(id))
		}
		w.start("a")
		settle(2 * time.Second)
		if got := w.fleet.recorded("a"); len(got) != 3 {
			t.Fatalf("node a records %v, want c1, c2, c3", got)
		}
		for _, id := range []string{"c1", "c2", "c3"} {
			if l, ok := w.lease(id); !ok || l.Node != "a" {
				t.Fatalf("lease of %s: %+v, %v; want node a", id, l, ok)
			}
		}
		assignRev, nodesRev := w.assign.revision(), w.nodes.revision()
		settle(20 * time.Second)
		for id, count := range w.fleet.recorded("a") {
			if count != 1 {
				t.Errorf("%s recorded %d times in 20 s, want once", id, count)
			}
		}
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Errorf("cameras stopped while heartbeats are stored: %v", s)
		}
		// The leases live by the node's heartbeat: one write a second for
		// the node, none per camera.
		if w.assign.revision() != assignRev {
			t.Errorf("%d lease writes in 20 s of holding, want none", w.assign.revision()-assignRev)
		}
		if d := w.nodes.revision() - nodesRev; d < 15 || d > 25 {
			t.Errorf("%d heartbeats in 20 s, want one a second", d)
		}
		for _, id := range []string{"c1", "c2", "c3"} {
			if got := w.fleet.recorder(id); got != "a" {
				t.Errorf("%s recorded by %q after 20 s, want a", id, got)
			}
		}
	})
}

// A heartbeat whose answer is lost but which was stored keeps the leases:
// the node sees its own heartbeat and does not stop its cameras.
func TestHeartbeatStoredWithoutAnswerKeepsTheCameras(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.putCamera(rtsp("c1"))
		w.start("a")
		settle(2 * time.Second)
		lost := 0
		w.nodes.setFaults(nil, func(op, key string) (bool, error) {
			if op == "put" && lost < 5 {
				lost++
				return true, errLostAnswer
			}
			return true, nil
		})
		settle(15 * time.Second)
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Errorf("camera stopped after heartbeats stored without answer: %v", s)
		}
		if n := w.fleet.recorded("a")["c1"]; n != 1 {
			t.Errorf("c1 recorded %d times, want once", n)
		}
		if lost != 5 {
			t.Fatalf("%d heartbeats lost their answer, want 5", lost)
		}
	})
}

// A killed node's cameras are taken once its heartbeat has not been seen
// for LeaseTTL, not before.
func TestDeadHolderLeasesTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		id := wins("b", []string{"a", "b"}, 1)[0]
		w.putCamera(rtsp(id))
		var dead atomic.Bool
		nb := w.start("b", cutOff(&dead))
		w.start("a")
		settle(2 * time.Second)
		if w.fleet.recorder(id) != "b" {
			t.Fatalf("%s recorded by %q, want b", id, w.fleet.recorder(id))
		}
		// b dies without a word: it records nothing more and nothing it
		// writes is stored.
		dead.Store(true)
		nb.Close()
		died := time.Now()
		settle(10 * time.Second)
		r, ok := w.fleet.lastRecord("a", id)
		if !ok {
			t.Fatalf("%s not taken by a after b died", id)
		}
		if d := r.at.Sub(died); d < DefaultLeaseTTL {
			t.Errorf("a took %s %v after b's last heartbeat, before the lease TTL", id, d)
		}
		if o := w.fleet.overlapsSeen(); len(o) > 0 {
			t.Errorf("overlap: %v", o)
		}
	})
}

// A node that joins takes the cameras it wins; the holder stops each one
// before it deletes the lease, so no camera is recorded by two nodes.
func TestRebalanceHandsOverWithoutOverlap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		ids := wins("b", []string{"a", "b"}, 5)
		ids = append(ids, wins("a", []string{"a", "b"}, 5)...)
		for _, id := range ids {
			w.putCamera(rtsp(id))
		}
		w.start("a")
		settle(2 * time.Second)
		if got := len(w.fleet.recorded("a")); got != 10 {
			t.Fatalf("node a alone records %d cameras, want 10", got)
		}
		w.start("b")
		settle(10 * time.Second)
		for i, id := range ids {
			want := "a"
			if i < 5 {
				want = "b"
			}
			if got := w.fleet.recorder(id); got != want {
				t.Errorf("%s recorded by %q, want %q", id, got, want)
			}
			if l, _ := w.lease(id); l.Node != want {
				t.Errorf("lease of %s held by %q, want %q", id, l.Node, want)
			}
		}
		if o := w.fleet.overlapsSeen(); len(o) > 0 {
			t.Errorf("cameras recorded by two nodes at once: %v", o)
		}
	})
}

// Close stops every camera, deletes the leases and the heartbeat.
func TestDrainReleasesEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		for _, id := range []string{"c1", "c2", "c3", "c4"} {
			w.putCamera(rtsp(id))
		}
		n := w.start("a")
		settle(2 * time.Second)
		n.Close()
		if s := w.fleet.stopped("a"); len(s) != 4 {
			t.Errorf("stopped %v on close, want all four cameras", s)
		}
		for _, id := range []string{"c1", "c2", "c3", "c4"} {
			if _, ok := w.lease(id); ok {
				t.Errorf("lease of %s left after close", id)
			}
		}
		if w.nodes.value("a") != nil {
			t.Error("heartbeat left after close")
		}
	})
}

// A push camera goes to the node its publisher reaches; a claim is refused
// (to retry) while a stop of the camera is under way or its lease is not
// fresh.
func TestClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.putCamera(push("p1"))
		w.putCamera(rtsp("c1"))
		a, b := w.start("a"), w.start("b")
		settle(2 * time.Second)
		ctx := context.Background()
		if err := a.Claim(ctx, "p1"); err != nil {
			t.Fatalf("claim on a: %v", err)
		}
		if w.fleet.recorder("p1") != "a" {
			t.Fatal("p1 not recorded by a after its claim")
		}
		if err := b.Claim(ctx, "p1"); err != nil {
			t.Fatalf("claim on b: %v", err)
		}
		settle(time.Second)
		if got := w.fleet.recorder("p1"); got != "b" {
			t.Fatalf("p1 recorded by %q after b's claim, want b", got)
		}
		if !slices.Contains(w.fleet.stopped("a"), "p1") {
			t.Error("a did not stop p1 after b claimed it")
		}
		if err := a.Claim(ctx, "c1"); !errors.Is(err, ErrNotPush) {
			t.Errorf("claim of a pulled camera: %v, want ErrNotPush", err)
		}

		// b's heartbeats fail: it records p1 on, and a claim of it is
		// answered at once.
		w.nodes.setFaults(nil, func(op, key string) (bool, error) {
			if op == "put" && key == "b" {
				return false, errInjected
			}
			return true, nil
		})
		settle(10 * time.Second)
		if err := b.Claim(ctx, "p1"); err != nil {
			t.Errorf("claim while heartbeats fail: %v", err)
		}
		if got := w.fleet.recorder("p1"); got != "b" {
			t.Errorf("p1 recorded by %q while b's heartbeats fail, want b", got)
		}
		w.nodes.setFaults(nil, nil)
		settle(2 * time.Second)
		var retry retryError

		// Blocked, b releases p1 and its stop hangs; unblocked, a claim
		// waits for the stop to end.
		open := w.fleet.gate("b", "p1")
		blocked := push("p1")
		blocked.Blocked = true
		w.putCamera(blocked)
		settle(time.Second)
		w.putCamera(push("p1"))
		settle(time.Second)
		if err := b.Claim(ctx, "p1"); !errors.As(err, &retry) {
			t.Errorf("claim while the release stops the camera: %v, want a retry error", err)
		}
		open()
		settle(time.Second)
		if err := b.Claim(ctx, "p1"); err != nil {
			t.Errorf("claim after the release: %v", err)
		}
		settle(time.Second)
		if got := w.fleet.recorder("p1"); got != "b" {
			t.Errorf("p1 recorded by %q after the claim, want b", got)
		}
	})
}

// An edit of a recorded camera reaches its owners at once, under the same
// lease epoch, without a stop.
func TestEditWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.putCamera(rtsp("c1"))
		w.start("a")
		settle(2 * time.Second)
		first, _ := w.fleet.lastRecord("a", "c1")
		edited := rtsp("c1")
		edited.Transport = "udp"
		edited.HistoryDays = 9
		w.putCamera(edited)
		settle(DefaultTick)
		last, _ := w.fleet.lastRecord("a", "c1")
		if last.cam != edited {
			t.Fatalf("owners last told %+v, want the edited record", last.cam)
		}
		if last.epoch != first.epoch {
			t.Errorf("epoch changed on an edit: %d, then %d", first.epoch, last.epoch)
		}
		if d := last.at.Sub(first.at); d < 0 {
			t.Errorf("edit not told after the start")
		}
		if s := w.fleet.stopped("a"); len(s) != 0 {
			t.Errorf("cluster stopped %v on an edit; restarting is the owner's decision", s)
		}
		// The same record again tells nothing.
		w.putCamera(edited)
		settle(time.Second)
		if got := w.fleet.recorded("a")["c1"]; got != 2 {
			t.Errorf("c1 told %d times after an unchanged write, want 2", got)
		}
	})
}

// A camera edited while its holder hands it over is recorded by the next
// holder with the edited record.
func TestEditDuringHandover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		id := wins("b", []string{"a", "b"}, 1)[0]
		w.putCamera(rtsp(id))
		w.start("a")
		settle(2 * time.Second)
		open := w.fleet.gate("a", id)
		w.start("b")
		settle(2 * time.Second) // a is releasing: its stop waits
		edited := rtsp(id)
		edited.Sound = true
		w.putCamera(edited)
		settle(time.Second)
		if got := w.fleet.recorder(id); got != "a" {
			t.Fatalf("%s recorded by %q while a's stop waits, want a", id, got)
		}
		open()
		settle(2 * time.Second)
		last, ok := w.fleet.lastRecord("b", id)
		if !ok || last.cam != edited {
			t.Fatalf("b records %+v (%v), want the edited record", last.cam, ok)
		}
		if o := w.fleet.overlapsSeen(); len(o) > 0 {
			t.Errorf("overlap: %v", o)
		}
	})
}

// A camera removed while its lease is being taken is never recorded, and
// its lease goes.
func TestRemoveWhileTaking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.start("a")
		settle(time.Second)
		w.assign.setFaults(func(op, key string) time.Duration {
			if op == "create" {
				return time.Second
			}
			return 0
		}, nil)
		w.putCamera(rtsp("c1"))
		settle(500 * time.Millisecond) // the take is under way
		w.deleteCamera("c1")
		settle(3 * time.Second)
		if n := w.fleet.recorded("a")["c1"]; n != 0 {
			t.Errorf("removed camera recorded %d times", n)
		}
		if _, ok := w.lease("c1"); ok {
			t.Error("lease of the removed camera left")
		}
	})
}

// Takes that NATS answers slowly (a mass takeover on a loaded server) run
// beside the loop: the node's own cameras go on being renewed.
func TestSlowTakesDoNotStopHeldCameras(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		for _, id := range []string{"h1", "h2", "h3"} {
			w.putCamera(rtsp(id))
		}
		w.start("a")
		settle(2 * time.Second)
		w.assign.setFaults(func(op, key string) time.Duration {
			if op == "create" {
				return 1900 * time.Millisecond
			}
			return 0
		}, nil)
		for i := range 40 {
			w.putCamera(rtsp("n" + string(rune('a'+i%26)) + string(rune('a'+i/26))))
		}
		settle(15 * time.Second)
		for _, id := range w.fleet.stopped("a") {
			t.Errorf("camera %s stopped during a slow takeover", id)
		}
		if got := len(w.fleet.recorded("a")); got != 43 {
			t.Errorf("node records %d cameras, want 43", got)
		}
	})
}

// A node refuses to start with the id of a live node; the heartbeat of a
// dead process with its id does not stop it.
func TestNodeIDInUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.start("a")
		settle(time.Second)
		twin := New(w.config("a"))
		if err := twin.Start(context.Background()); !errors.Is(err, ErrNodeIDInUse) {
			t.Fatalf("second node with id a: %v, want ErrNodeIDInUse", err)
		}

		stale, _ := json.Marshal(NodeInfo{ID: "d", Instance: "gone", Started: time.Now()})
		if _, err := w.nodes.Put(context.Background(), "d", stale); err != nil {
			t.Fatal(err)
		}
		w.start("d")
	})
}

// A process that shares this node's id and started earlier, seen after
// both got past Start, makes the later one stand down.
func TestLaterTwinStandsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		w.putCamera(rtsp("c1"))
		earlier := time.Now().Add(-time.Hour)
		n := w.start("a")
		settle(2 * time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			tk := time.NewTicker(time.Second)
			defer tk.Stop()
			for ctx.Err() == nil {
				b, _ := json.Marshal(NodeInfo{ID: "a", Instance: "twin", Started: earlier, At: time.Now()})
				_, _ = w.nodes.Put(ctx, "a", b)
				select {
				case <-ctx.Done():
				case <-tk.C:
				}
			}
		}()
		settle(3 * time.Second)
		if !errors.Is(n.Err(), ErrNodeIDInUse) {
			t.Errorf("Err() = %v, want ErrNodeIDInUse", n.Err())
		}
		if !slices.Contains(w.fleet.stopped("a"), "c1") {
			t.Error("camera not stopped by the node that stands down")
		}
		if _, ok := w.lease("c1"); ok {
			t.Error("lease kept by the node that stands down")
		}
		cancel()
	})
}

// A node is never given more cameras than it can hold: the excess goes to
// other nodes with room, and what fits nowhere is reported.
func TestCapacityPlacesTheExcessElsewhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		for i := range 8 {
			w.putCamera(rtsp("c" + string(rune('0'+i))))
		}
		var mu sync.Mutex
		var unplaced []string
		limit := func(max int) func(*Config) {
			return func(c *Config) {
				c.MaxCameras = func() int { return max }
				c.OnUnplaced = func(ids []string) {
					mu.Lock()
					defer mu.Unlock()
					unplaced = append(unplaced, ids...)
				}
			}
		}
		w.start("a", limit(3))
		w.start("b", limit(3))
		settle(10 * time.Second)
		a, b := len(w.fleet.recorded("a")), len(w.fleet.recorded("b"))
		if a != 3 || b != 3 {
			t.Errorf("nodes record %d and %d cameras, want 3 each", a, b)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(unplaced) != 2 {
			t.Errorf("unplaced cameras reported: %v, want the 2 that fit nowhere", unplaced)
		}
		if o := w.fleet.overlapsSeen(); len(o) > 0 {
			t.Errorf("overlap: %v", o)
		}
	})
}
