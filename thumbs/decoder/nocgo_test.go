//go:build !cgo

package decoder

import (
	"errors"
	"testing"

	"github.com/vigia/vigia/media"
)

// TestUnavailableWithoutCgo: a build without cgo compiles and says so.
func TestUnavailableWithoutCgo(t *testing.T) {
	if Available() {
		t.Fatal("Available without cgo")
	}
	if _, err := New(media.H264, Options{}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("New: %v, want ErrUnavailable", err)
	}
}
