package app

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/cluster"
	"github.com/vigia/vigia/sign"
)

// BenchmarkAPILiveURL measures what the API does for each live URL it
// hands out (the listing, the live URL operation, each renewal of the
// player page): the camera's lease and its node read from NATS KV, and a
// token signed.
func BenchmarkAPILiveURL(b *testing.B) {
	ctx := context.Background()
	bs, err := bus.Open(ctx, bus.Options{Listen: "127.0.0.1:0", StoreDir: b.TempDir()}, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(bs.Close)
	lease, _ := json.Marshal(cluster.Lease{Node: "rec-1", TakenAt: time.Now()})
	node, _ := json.Marshal(cluster.NodeInfo{ID: "rec-1", LiveURL: "http://rec-1.example:8080", At: time.Now()})
	if _, err := bs.KV(bus.BucketAssign).Put(ctx, "7", lease); err != nil {
		b.Fatal(err)
	}
	if _, err := bs.KV(bus.BucketNodes).Put(ctx, "rec-1", node); err != nil {
		b.Fatal(err)
	}
	keys, err := sign.New([]byte("bench-secret-0123456789abcdef"))
	if err != nil {
		b.Fatal(err)
	}
	l := apiLive{&App{bus: bs, keys: keys}}
	exp := time.Now().Add(2 * time.Minute)
	b.ResetTimer()
	for b.Loop() {
		if u, _, err := l.LiveURLs(ctx, "7", true, exp); err != nil || u == "" {
			b.Fatalf("%q %v", u, err)
		}
	}
}
