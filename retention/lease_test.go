package retention

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/testenv"
)

// TestOneSweeperAtATime runs two sweepers (two nodes) on one NATS: only the
// lease owner sweeps; when it stops renewing, the other takes over.
func TestOneSweeperAtATime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{Listen: "127.0.0.1:0", StoreDir: t.TempDir()}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := &clock{t: time.Now()}
	p := &plan{days: map[string]int{"cam1": 1}}
	ttl := LeaseTTL(time.Minute)
	newSweeper := func(node string) *Sweeper {
		s, err := New(Config{Store: st, Cameras: p.cameras, Now: clk.Now, Lease: b.NewLease(LeaseName, node, ttl, clk.Now), Log: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, c := newSweeper("node-a"), newSweeper("node-b")

	if _, swept, err := a.RunOnce(ctx); err != nil || !swept {
		t.Fatalf("node-a: swept=%v err=%v, want the lease", swept, err)
	}
	if _, swept, err := c.RunOnce(ctx); err != nil || swept {
		t.Fatalf("node-b: swept=%v err=%v while node-a holds the lease", swept, err)
	}
	if _, swept, err := a.RunOnce(ctx); err != nil || !swept {
		t.Fatalf("node-a renewing: swept=%v err=%v", swept, err)
	}
	// node-a stops renewing; after the TTL node-b takes over.
	clk.Add(ttl + time.Second)
	if _, swept, err := c.RunOnce(ctx); err != nil || !swept {
		t.Fatalf("node-b after expiry: swept=%v err=%v", swept, err)
	}
	if _, swept, err := a.RunOnce(ctx); err != nil || swept {
		t.Fatalf("node-a after losing the lease: swept=%v err=%v", swept, err)
	}
}

// TestStartSweeps checks that the background loop sweeps.
func TestStartSweeps(t *testing.T) {
	st, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old := storage.SegmentKey("cam1", time.Now().Add(-72*time.Hour), time.Second, 812)
	put(t, st, old, 1)
	p := &plan{days: map[string]int{"cam1": 1}}
	s, err := New(Config{Store: st, Cameras: p.cameras, Poll: 20 * time.Millisecond, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Close()
	testenv.WaitFor(t, 30*time.Second, "the background sweeper to delete an expired segment", func() bool {
		return !exists(t, st, old)
	})
}
