package cluster

import (
	"context"
	"encoding/json"
	"testing"
)

func TestHolderLiveURL(t *testing.T) {
	ctx := context.Background()
	assign, nodes := newMemBucket(), newMemBucket()
	put := func(b *memBucket, key string, v any) {
		t.Helper()
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Put(ctx, key, raw); err != nil {
			t.Fatal(err)
		}
	}
	put(assign, "held", Lease{Node: "n1"})
	put(assign, "gone", Lease{Node: "n2"})
	put(assign, "silent", Lease{Node: "n3"})
	if _, err := assign.Put(ctx, "garbled", []byte("{")); err != nil {
		t.Fatal(err)
	}
	put(nodes, "n1", NodeInfo{ID: "n1", LiveURL: "http://n1:8080/"})
	put(nodes, "n3", NodeInfo{ID: "n3"})
	for _, tc := range []struct {
		camera, holder, live string
	}{
		{"held", "n1", "http://n1:8080"},
		{"gone", "n2", ""},
		{"silent", "n3", ""},
		{"garbled", "", ""},
		{"free", "", ""},
	} {
		t.Run(tc.camera, func(t *testing.T) {
			if got := Holder(ctx, assign, tc.camera); got != tc.holder {
				t.Errorf("Holder = %q, want %q", got, tc.holder)
			}
			if got := HolderLiveURL(ctx, assign, nodes, tc.camera); got != tc.live {
				t.Errorf("HolderLiveURL = %q, want %q", got, tc.live)
			}
		})
	}
}
