//go:build !cgo

package decodeproc

import (
	"context"
	"errors"
	"testing"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/thumbs/decoder"
)

// TestUnavailableWithoutCgo: without cgo a Pool, even with a command,
// reports unavailable as the in-process decoder did, and starts nothing.
func TestUnavailableWithoutCgo(t *testing.T) {
	p := testPool(t, Config{})
	if p.Available() {
		t.Fatal("available without cgo")
	}
	_, err := p.Decode(context.Background(), &Request{Codec: media.H264, Units: [][][]byte{{{0x65}}}})
	if !errors.Is(err, decoder.ErrUnavailable) || p.Stats().Processes != 0 {
		t.Fatalf("decode: %v, stats %+v", err, p.Stats())
	}
}
