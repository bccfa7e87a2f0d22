package e2e

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/bus"
)

// TestHandoverStartsAfterLastEnd: a node that takes a camera starts no
// segment before the end of the camera's last segment on the node that held
// it (bus.BucketSegmentEnds), even when that end is ahead of its own clock,
// as it is when the other node anchored its segments late; an end too far
// ahead (a clock out of step) is ignored; and a node that gives its cameras
// up stores each one's last end before it releases the lease.
func TestHandoverStartsAfterLastEnd(t *testing.T) {
	t.Parallel()
	e := newClusterEnv(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// c2 and c3 come into the registry once the node records c1, so that
	// the ends below lie ahead of the node's clock when it starts them.
	for _, id := range []string{"c2", "c3"} {
		if err := e.bus.KV(bus.BucketCameras).Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	n1 := e.node("h1")
	waitSegments(t, e.st, "c1", 1, 60*time.Second)
	late := time.Now().Add(7 * time.Second).UnixMilli() // a late anchor
	skewed := time.Now().Add(time.Minute).UnixMilli()   // a clock out of step
	for id, end := range map[string]int64{"c2": late, "c3": skewed} {
		if err := e.bus.PutSegmentEnd(ctx, id, bus.SegmentEnd{EndMs: end, Node: "before"}); err != nil {
			t.Fatal(err)
		}
		e.register(id)
	}
	c2 := waitSegments(t, e.st, "c2", 2, 60*time.Second)
	if c2[0].StartMs < late {
		t.Errorf("c2's first segment %s starts %d ms before the previous holder's last end", c2[0].Key, late-c2[0].StartMs)
	}
	c3 := waitSegments(t, e.st, "c3", 1, 60*time.Second)
	if c3[0].StartMs > skewed-30_000 {
		t.Errorf("c3's first segment %s follows an end a minute ahead of the node's clock", c3[0].Key)
	}
	for i := 1; i < len(c2); i++ {
		if c2[i].StartMs < c2[i-1].EndMs() {
			t.Errorf("%s overlaps %s", c2[i].Key, c2[i-1].Key)
		}
	}

	// A graceful stop releases the leases; the end stored is each camera's
	// last segment's.
	if err := n1.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := n1.Process.Wait(); err != nil {
		t.Fatalf("node h1: %v", err)
	}
	for _, id := range []string{"c1", "c2", "c3"} {
		got, ok, err := e.bus.GetSegmentEnd(ctx, id)
		if err != nil || !ok {
			t.Fatalf("%s: no last end stored by the stopping node: %v", id, err)
		}
		segs := segments(t, e.st, id)
		last := segs[len(segs)-1]
		// The key's start and duration are each cut to the millisecond.
		if d := got.EndMs - last.EndMs(); got.Node != "h1" || d < -1 || d > 1 {
			t.Errorf("%s: stored end %+v, want node h1 and the end of %s (%d ± 1 ms)", id, got, last.Key, last.EndMs())
		}
	}
	if l := e.leases(); len(l) != 0 {
		t.Errorf("leases not released: %v", l)
	}
}
