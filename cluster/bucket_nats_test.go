package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
)

// The NATS bucket keeps the contract the loop and the in-memory fake rely
// on, against a real (embedded) NATS server.
func TestNATSBucket(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{Listen: "127.0.0.1:0", StoreDir: t.TempDir(), Name: "cluster-test"}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for name, kv := range map[string]Bucket{"nats": b.Bucket(bus.BucketAssign), "memory": newMemBucket()} {
		t.Run(name, func(t *testing.T) { checkBucket(ctx, t, kv) })
	}
}

func checkBucket(ctx context.Context, t *testing.T, kv Bucket) {
	if _, err := kv.Get(ctx, "k"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get of a missing key: %v, want ErrNotFound", err)
	}
	r1, err := kv.Create(ctx, "k", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Create(ctx, "k", []byte("x")); !errors.Is(err, ErrWrongRevision) {
		t.Errorf("create of an existing key: %v, want ErrWrongRevision", err)
	}
	r2, err := kv.Update(ctx, "k", []byte("2"), r1)
	if err != nil || r2 <= r1 {
		t.Fatalf("update: %d, %v", r2, err)
	}
	if _, err := kv.Update(ctx, "k", []byte("x"), r1); !errors.Is(err, ErrWrongRevision) {
		t.Errorf("update at an old revision: %v, want ErrWrongRevision", err)
	}
	if err := kv.Delete(ctx, "k", r1); !errors.Is(err, ErrWrongRevision) {
		t.Errorf("delete at an old revision: %v, want ErrWrongRevision", err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	ch, err := kv.Watch(wctx)
	if err != nil {
		t.Fatal(err)
	}
	if e := <-ch; e.Key != "k" || string(e.Value) != "2" || e.Rev != r2 {
		t.Errorf("first watched entry %+v, want k=2 at %d", e, r2)
	}
	if e := <-ch; e.Key != "" {
		t.Errorf("entry %+v after the current ones, want the end marker", e)
	}
	if err := kv.Delete(ctx, "k", r2); err != nil {
		t.Fatal(err)
	}
	if e := <-ch; e.Key != "k" || !e.Deleted || e.Rev <= r2 {
		t.Errorf("watched delete %+v", e)
	}
	if _, err := kv.Create(ctx, "k", []byte("3")); err != nil {
		t.Errorf("create after delete: %v", err)
	}
	stop()
	for range ch {
	}
}
