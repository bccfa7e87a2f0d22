//go:build !cgo

package thumbs

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestUnavailableWithoutCgo: without cgo the Service starts, makes no
// consumers and answers snapshots with ErrUnavailable, even with a pool
// of decoder processes (which cannot decode either).
func TestUnavailableWithoutCgo(t *testing.T) {
	for _, tc := range []struct {
		name string
		dec  Decoder
	}{{"no decoder", nil}, {"pool", testDecoder(t)}} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{Decoder: tc.dec, Store: func(context.Context, Kind, string, time.Time, []byte) (string, error) { return "", nil }})
			defer s.Close()
			if s.Available() || s.Consumer("cam") != nil {
				t.Fatal("thumbnails available without cgo")
			}
			if _, err := s.Snapshot(context.Background(), "cam"); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("Snapshot: %v", err)
			}
			if got := UnavailableReason(tc.dec); got != "built without cgo" {
				t.Fatalf("reason %q", got)
			}
		})
	}
}
