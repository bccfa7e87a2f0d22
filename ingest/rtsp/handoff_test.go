package rtsp

import (
	"testing"
	"time"

	"github.com/vigia/vigia/media"
)

// TestHandoffDropsUntilKeyframe: while the sink is stuck, put never
// waits: units past the queue are dropped and counted, and video resumes
// at the next keyframe, marked as a gap.
func TestHandoffDropsUntilKeyframe(t *testing.T) {
	sink := &gateSink{open: make(chan struct{})}
	drops := 0
	h := newHandoff(sink, 0, func(string) { drops++ })
	n := 0
	for drops == 0 {
		h.put(&media.Unit{Track: 0, Key: n == 0})
		n++
	}
	h.put(&media.Unit{Track: 0}) // refers to the dropped one
	close(sink.open)
	waitFor(t, "the queue to drain", 10*time.Second, func() bool { return len(sink.byTrack(0)) == n-1 })
	h.put(&media.Unit{Track: 0})            // still refers to it
	h.put(&media.Unit{Track: 0, Key: true}) // resumes
	h.close()
	if drops != 3 {
		t.Errorf("%d drops, want 3", drops)
	}
	got := sink.byTrack(0)
	if len(got) != n {
		t.Fatalf("%d units reached the sink, want %d", len(got), n)
	}
	last := got[len(got)-1]
	if !last.Key || !last.Gap {
		t.Errorf("last unit: key %v gap %v, want a keyframe marked as a gap", last.Key, last.Gap)
	}
	for _, u := range got[:len(got)-1] {
		if u.Gap {
			t.Fatal("a unit before the drop is marked as a gap")
		}
	}
}
