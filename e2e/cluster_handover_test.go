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
// as it is when the other node anchored its segments late; and a node that
// gives a camera up stores that end before it releases the lease.
func TestHandoverStartsAfterLastEnd(t *testing.T) {
	t.Parallel()
	e := newClusterEnv(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ahead := time.Now().Add(20 * time.Second).UnixMilli()
	if err := e.bus.PutSegmentEnd(ctx, "c1", bus.SegmentEnd{EndMs: ahead, Node: "before"}); err != nil {
		t.Fatal(err)
	}
	n1 := e.node("h1")
	segs := waitSegments(t, e.st, "c1", 2, 60*time.Second)
	if segs[0].StartMs < ahead {
		t.Fatalf("first segment %s starts %d ms before the previous holder's last end", segs[0].Key, ahead-segs[0].StartMs)
	}
	for i := 1; i < len(segs); i++ {
		if segs[i].StartMs < segs[i-1].EndMs() {
			t.Errorf("%s overlaps %s", segs[i].Key, segs[i-1].Key)
		}
	}

	// A graceful stop releases the lease; the end stored is the last
	// segment's.
	if err := n1.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := n1.Process.Wait(); err != nil {
		t.Fatalf("node h1: %v", err)
	}
	got, ok, err := e.bus.GetSegmentEnd(ctx, "c1")
	if err != nil || !ok {
		t.Fatalf("no last end stored by the stopping node: %v", err)
	}
	segs = segments(t, e.st, "c1")
	last := segs[len(segs)-1]
	if got.Node != "h1" || got.EndMs != last.EndMs() {
		t.Errorf("stored end %+v, want node h1 and the end of %s (%d)", got, last.Key, last.EndMs())
	}
	if _, held := e.leases()["c1"]; held {
		t.Errorf("lease of c1 not released")
	}
}
