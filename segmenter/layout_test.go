package segmenter

import (
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
)

// The Writer keeps its own copy of the recording layout, since the
// segmenter does not import storage; readers rely on storage's. The two
// must agree.
func TestLayoutMatchesStorage(t *testing.T) {
	for _, target := range []time.Duration{0, time.Millisecond, 2 * time.Second, 59 * time.Second, time.Minute, 90 * time.Second, 10 * time.Minute} {
		if got, want := maxSegmentDuration(target), storage.MaxSegmentDuration(target); got != want {
			t.Errorf("target %v: the Writer cuts at the latest at %v, readers look back %v", target, got, want)
		}
	}
	if want := storage.TouchToleranceMs * time.Millisecond; touchTolerance != want {
		t.Errorf("the Writer reports gaps past %v, readers see gaps past %v", touchTolerance, want)
	}
}
