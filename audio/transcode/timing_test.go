package transcode

import (
	"testing"
	"time"
)

// TestTimingPlace: units where the samples before them end pass as they
// are; a later one gets silence, an earlier one loses samples, small
// differences are let be, and a long gap restarts the count.
func TestTimingPlace(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name          string
		pts           time.Duration // of the second unit; the first is at 0, 160 samples
		n             int
		silence, skip int
		anchors       int
	}{
		{"in step", 20 * ms, 160, 0, 0, 1},
		{"jitter ahead", 20*ms + 9*ms, 160, 0, 0, 1},
		{"jitter behind", 20*ms - 9*ms, 160, 0, 0, 1},
		{"one packet lost", 40 * ms, 160, 160, 0, 1},
		{"overlap", 20*ms - 15*ms, 160, 0, 120, 1},
		{"overlap longer than the unit", 20*ms - 500*ms, 160, 0, 160, 1},
		{"far behind", -time.Hour, 160, 0, 160, 1},
		{"longest gap filled", 20*ms + time.Second, 160, 8000, 0, 1},
		{"gap restarts the count", 20*ms + time.Second + ms, 160, 0, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tm := timing{rate: 8000}
			wall := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			if s, k := tm.place(0, wall, 160); s != 0 || k != 0 {
				t.Fatalf("first unit: silence %d, skip %d", s, k)
			}
			tm.add(160)
			s, k := tm.place(tc.pts, wall.Add(tc.pts), tc.n)
			if s != tc.silence || k != tc.skip || len(tm.anchors) != tc.anchors {
				t.Fatalf("silence %d, skip %d, %d anchors; want %d, %d, %d", s, k, len(tm.anchors), tc.silence, tc.skip, tc.anchors)
			}
			tm.add(s + tc.n - k)
			// The second unit's first sample kept is at its time.
			at, w := tm.at(160 + int64(s))
			want := tc.pts + time.Duration(k)*time.Second/8000
			if tc.anchors == 1 && tc.silence == 0 && tc.skip == 0 {
				want = 20 * ms // let be: counted where the samples end
			}
			if tc.skip == tc.n {
				return // nothing of the unit is kept
			}
			if at != want || !w.Equal(wall.Add(want)) {
				t.Fatalf("second unit at %v (wall %v), want %v", at, w.Sub(wall), want)
			}
		})
	}
}

// TestTimingAt: samples before the first anchor count back from it;
// after a restart, samples before it keep the old anchor; forget keeps
// what later samples need.
func TestTimingAt(t *testing.T) {
	tm := timing{rate: 8000}
	tm.place(time.Second, time.Time{}, 8000)
	tm.add(8000)
	tm.place(10*time.Second, time.Time{}, 8000)
	tm.add(8000)
	for _, tc := range []struct {
		sample int64
		want   time.Duration
	}{
		{-1024, time.Second - 128*time.Millisecond},
		{0, time.Second},
		{7999, 2*time.Second - time.Second/8000},
		{8000, 10 * time.Second},
		{12000, 10*time.Second + 500*time.Millisecond},
	} {
		if at, w := tm.at(tc.sample); at != tc.want || !w.IsZero() {
			t.Errorf("sample %d at %v (wall %v), want %v", tc.sample, at, w, tc.want)
		}
	}
	tm.forget(7000)
	if len(tm.anchors) != 2 {
		t.Fatalf("%d anchors after forgetting before 7000, want 2", len(tm.anchors))
	}
	tm.forget(9000)
	if len(tm.anchors) != 1 {
		t.Fatalf("%d anchors after forgetting before 9000, want 1", len(tm.anchors))
	}
	if at, _ := tm.at(8000); at != 10*time.Second {
		t.Fatalf("sample 8000 at %v after forgetting, want 10s", at)
	}
}
