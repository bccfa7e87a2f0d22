package segmenter

import (
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/media"
)

func TestStaggered(t *testing.T) {
	const d = 4 * time.Second
	base := time.UnixMilli(1_700_000_000_000) // a multiple of d
	for _, tc := range []struct {
		start       time.Time
		phase, want time.Duration
	}{
		{base, time.Second, 5 * time.Second},     // earliest base+2s; next time 1 s past a multiple: base+5s
		{base, 3 * time.Second, 3 * time.Second}, // base+3s
		{base, 2 * time.Second, 2 * time.Second}, // base+2s exactly: d/2
		{base.Add(500 * time.Millisecond), time.Second, 4500 * time.Millisecond},
		{base.Add(3 * time.Second), time.Second, 2 * time.Second}, // earliest base+5s is on the phase
		{base.Add(3 * time.Second), 999 * time.Millisecond, 5999 * time.Millisecond},
	} {
		got := staggered(tc.start, d, tc.phase)
		if got != tc.want {
			t.Errorf("staggered(%v after base, phase %v) = %v, want %v", tc.start.Sub(base), tc.phase, got, tc.want)
		}
		if got < d/2 || got >= d+d/2 {
			t.Errorf("staggered = %v, outside [d/2, 3d/2)", got)
		}
	}
	if p := SegmentPhase("cam-1", d); p < time.Millisecond || p >= d || p != SegmentPhase("cam-1", d) {
		t.Errorf("SegmentPhase = %v, want a fixed value in [1ms, %v)", p, d)
	}
	if SegmentPhase("cam-1", d) == SegmentPhase("cam-2", d) && SegmentPhase("cam-2", d) == SegmentPhase("cam-3", d) {
		t.Error("three cameras share one phase")
	}
}

// Cameras started at the same moment end their segments at their own
// phase of the segment duration: the first segment is cut at the first
// keyframe at or after it, the next ones a segment duration later.
func TestWriterPhaseStaggersCuts(t *testing.T) {
	clip := makeClip(t, media.H264, 2, 25, 5, false) // a keyframe every 0.2 s
	const d = 4 * time.Second
	base := time.UnixMilli(1_700_000_000_000)
	for _, phase := range []time.Duration{time.Second, 3 * time.Second} {
		ds := &dirStore{dir: t.TempDir()}
		sp := newTestSpool(t, t.TempDir(), ds)
		w := NewWriter(WriterConfig{Camera: "cam", SegmentDuration: d, Phase: phase,
			FragmentDuration: 500 * time.Millisecond, Spool: sp, Log: zaptest.NewLogger(t)})
		if err := w.SetTracks(clip.tracks()); err != nil {
			t.Fatal(err)
		}
		for _, u := range clip.units(25*20, base) {
			if err := w.WriteUnit(u); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		drain(t, sp)
		segs := ds.stored()
		if len(segs) < 4 {
			t.Fatalf("phase %v: %d segments", phase, len(segs))
		}
		want := base.Add(staggered(base, d, phase))
		for i, s := range segs[:len(segs)-1] { // the last ends at Close
			if e := s.End(); e.Before(want) || e.Sub(want) > 200*time.Millisecond {
				t.Errorf("phase %v: segment %d ends %v after the start, want at the first keyframe from %v", phase, i, e.Sub(base), want.Sub(base))
			}
			want = want.Add(d)
		}
	}
}
