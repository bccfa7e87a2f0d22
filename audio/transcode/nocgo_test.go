//go:build !cgo

package transcode

import (
	"errors"
	"testing"

	"github.com/vigia/vigia/media"
)

// TestUnavailableWithoutCgo: a build without cgo compiles and says so; a
// stage cannot be made, and the caller records the camera without sound.
func TestUnavailableWithoutCgo(t *testing.T) {
	if Available() {
		t.Fatal("Available without cgo")
	}
	tracks := []*media.Track{{Codec: media.H264}, {Codec: media.G711U, ClockRate: 8000}}
	out, s, err := NewStage(tracks, StageConfig{})
	if !errors.Is(err, ErrUnavailable) || s != nil || out[1] != tracks[1] {
		t.Fatalf("NewStage = %v, %v, %v; want the tracks, no stage, ErrUnavailable", out, s, err)
	}
}
