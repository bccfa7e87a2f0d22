//go:build !cgo

package thumbs

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestUnavailableWithoutCgo: without cgo the Service starts, makes no
// consumers and answers snapshots with ErrUnavailable.
func TestUnavailableWithoutCgo(t *testing.T) {
	s := New(Config{Store: func(context.Context, Kind, string, time.Time, []byte) (string, error) { return "", nil }})
	defer s.Close()
	if s.Available() || s.Consumer("cam") != nil {
		t.Fatal("thumbnails available without cgo")
	}
	if _, err := s.Snapshot(context.Background(), "cam"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Snapshot: %v", err)
	}
}
