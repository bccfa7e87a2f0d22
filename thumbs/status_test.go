package thumbs

import (
	"context"
	"testing"
	"time"

	"github.com/vigia/vigia/thumbs/decoder"
)

// TestStatus: /readyz's thumbnails field says "available" with a decoder
// that decodes, else why not.
func TestStatus(t *testing.T) {
	store := func(context.Context, Kind, string, time.Time, []byte) (string, error) { return "", nil }
	s := New(Config{Store: store})
	defer s.Close()
	if got, want := s.Status(), "unavailable: "+UnavailableReason(nil); got != want {
		t.Fatalf("without a decoder: %q, want %q", got, want)
	}
	p := New(Config{Store: store, Decoder: testDecoder(t)})
	defer p.Close()
	want := "available"
	if !decoder.Available() {
		want = "unavailable: built without cgo"
	}
	if got := p.Status(); got != want {
		t.Fatalf("with decoder processes: %q, want %q", got, want)
	}
}
