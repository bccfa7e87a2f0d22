package bench

import (
	"testing"
	"time"
)

func TestFileFrameStats(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	// indexed files: frames 100..249 in two files of 75
	marked := func(cam string, lo, n int64, start float64) storedFile {
		return storedFile{camera: cam, start: t0.Add(sec(start)), dur: sec(float64(n) / 15), frames: n,
			indexed: n, markMin: uint64(lo), markMax: uint64(lo + n - 1)}
	}
	timed := func(cam string, n int64, start, dur float64) storedFile {
		return storedFile{camera: cam, start: t0.Add(sec(start)), dur: sec(dur), frames: n}
	}
	cases := []struct {
		name             string
		files            []storedFile
		expected, lost   int64
		countedFromMarks bool
		camerasRecorded  int
		window           time.Duration
		cameras          []string
	}{
		{"marks, nothing lost", []storedFile{marked("a", 100, 75, 0), marked("a", 175, 75, 5)}, 150, 0, true, 1, 0, []string{"a"}},
		// The start times say nothing of the gap: the marks do.
		{"marks, a gap between files", []storedFile{marked("a", 100, 75, 0), marked("a", 185, 65, 5)}, 150, 10, true, 1, 0, []string{"a"}},
		{"marks, a frame lost in a file", []storedFile{{camera: "a", start: t0, dur: sec(5), frames: 74, indexed: 74, markMin: 100, markMax: 174}}, 75, 1, true, 1, 0, []string{"a"}},
		{"timestamps, chained", []storedFile{timed("a", 75, 0, 5), timed("a", 75, 5, 5)}, 150, 0, false, 1, 0, []string{"a"}},
		{"timestamps, a gap of a second", []storedFile{timed("a", 75, 0, 5), timed("a", 75, 6, 5)}, 165, 15, false, 1, 0, []string{"a"}},
		{"timestamps, a frame lost in a file", []storedFile{timed("a", 74, 0, 5)}, 75, 1, false, 1, 0, []string{"a"}},
		{"a camera without files", []storedFile{marked("a", 0, 15, 0)}, 15 + 150, 150, true, 1, 10 * time.Second, []string{"a", "b"}},
		{"some frames without an index", []storedFile{{camera: "a", start: t0, dur: sec(5), frames: 75, indexed: 70, markMin: 5, markMax: 74}}, 75, 0, false, 1, 0, []string{"a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := fileFrameStats(tc.cameras, tc.files, 15, tc.window)
			if st.Expected != tc.expected || st.Lost != tc.lost || st.CamerasRecorded != tc.camerasRecorded {
				t.Errorf("expected %d, lost %d, cameras %d; want %d, %d, %d", st.Expected, st.Lost, st.CamerasRecorded, tc.expected, tc.lost, tc.camerasRecorded)
			}
			if got := st.CountedFrom == "marks"; got != tc.countedFromMarks {
				t.Errorf("counted from %q, want marks %v", st.CountedFrom, tc.countedFromMarks)
			}
		})
	}
}

func TestMediaMTXStart(t *testing.T) {
	got, err := mediamtxStart("2026-11-25_04-09-35-494270")
	want := time.Date(2026, 11, 25, 4, 9, 35, 494270000, time.Local)
	if err != nil || !got.Equal(want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"2026-11-25_04-09-35", "2026-11-25_04-09-35-49427", "x-123456", "2026-11-25_04-09-35--12345"} {
		if _, err := mediamtxStart(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
