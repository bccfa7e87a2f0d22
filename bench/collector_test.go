package bench

import (
	"testing"
	"time"

	"github.com/vigia/vigia/segmenter"
)

func TestFrameStats(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	seg := func(cam string, startS, durS float64, frames int) segmenter.Segment {
		return segmenter.Segment{
			Camera: cam, Start: t0.Add(time.Duration(startS * float64(time.Second))),
			Duration: time.Duration(durS * float64(time.Second)), Frames: frames,
		}
	}
	tests := []struct {
		name    string
		segs    []segmenter.Segment
		cameras []string
		want    FrameStats
	}{
		{
			name:    "contiguous segments, nothing lost",
			segs:    []segmenter.Segment{seg("a", 0, 2, 30), seg("a", 2, 2, 30)},
			cameras: []string{"a"},
			want:    FrameStats{CamerasRecorded: 1, Expected: 60, Stored: 60},
		},
		{
			name:    "frames missing inside a segment",
			segs:    []segmenter.Segment{seg("a", 0, 2, 25), seg("a", 2, 2, 30)},
			cameras: []string{"a"},
			want:    FrameStats{CamerasRecorded: 1, Expected: 60, Stored: 55, Lost: 5, LostPercent: 100 * 5.0 / 60},
		},
		{
			name:    "gap between segments, stored out of order",
			segs:    []segmenter.Segment{seg("a", 4, 2, 30), seg("a", 0, 2, 30)},
			cameras: []string{"a"},
			want:    FrameStats{CamerasRecorded: 1, Expected: 90, Stored: 60, Lost: 30, LostPercent: 100 * 30.0 / 90},
		},
		{
			name:    "camera never recorded loses the whole window",
			segs:    []segmenter.Segment{seg("a", 0, 2, 30)},
			cameras: []string{"a", "b"},
			want:    FrameStats{CamerasRecorded: 1, Expected: 30 + 150, Stored: 30, Lost: 150, LostPercent: 100 * 150.0 / 180},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector(time.Minute)
			for _, s := range tc.segs {
				c.stored(s, time.Millisecond)
			}
			got := c.frameStats(tc.cameras, 15, 10*time.Second)
			if got.CamerasRecorded != tc.want.CamerasRecorded || got.Expected != tc.want.Expected ||
				got.Stored != tc.want.Stored || got.Lost != tc.want.Lost || got.LostPercent != tc.want.LostPercent {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSegmentStatsSplitsShortSegments(t *testing.T) {
	c := newCollector(2 * time.Second)
	c.stored(segmenter.Segment{Camera: "a", Size: 10, Duration: 1200 * time.Millisecond}, time.Millisecond) // staggered first segment
	for i := 2; i <= 100; i++ {
		c.stored(segmenter.Segment{Camera: "a", Size: 10, Duration: 2 * time.Second}, time.Duration(i)*time.Millisecond)
	}
	c.stored(segmenter.Segment{Camera: "a", Size: 10, Duration: 900 * time.Millisecond}, time.Second) // a discontinuity
	c.beginClose()
	c.stored(segmenter.Segment{Camera: "a", Size: 10, Duration: 2 * time.Second}, 3*time.Second) // behind the shutdown flush
	st := c.segmentStats()
	if st.Stored != 102 || st.StoredFull != 100 || st.StoredShort != 2 || st.Bytes != 1020 {
		t.Errorf("counts %+v", st)
	}
	if st.LatencyP50Ms != 50 || st.LatencyP99Ms != 99 || st.LatencyMaxMs != 100 {
		t.Errorf("full latencies p50 %v p99 %v max %v, want 50 99 100", st.LatencyP50Ms, st.LatencyP99Ms, st.LatencyMaxMs)
	}
	if st.ShortLatencyP50Ms != 1000 || st.ShortLatencyMaxMs != 3000 {
		t.Errorf("short latency p50 %v max %v, want 1000 and 3000", st.ShortLatencyP50Ms, st.ShortLatencyMaxMs)
	}
}

func TestLatencies(t *testing.T) {
	ms := func(v ...float64) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x*float64(time.Millisecond)))
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"unsorted median", ms(3, 1, 2), 50, 2 * time.Millisecond},
		{"max is exact", ms(3, 1, 2.4), 100, 3 * time.Millisecond},
		{"p0 is the smallest", ms(3, 1, 2), 0, 1 * time.Millisecond},
		{"within a bucket: its upper edge", ms(2.2, 2.5, 9), 50, 3 * time.Millisecond},
		{"coarse buckets above 10 s", ms(12_345, 12_399, 20_000), 50, 12_400 * time.Millisecond},
		{"beyond an hour: the max", ms(5_000_000, 7_000_000), 100, 7_000 * time.Second},
		{"negative counts as zero", ms(-1, 5), 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var l latencies
			for _, d := range tc.in {
				l.add(d)
			}
			if got := l.percentile(tc.p); got != tc.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tc.in, tc.p, got, tc.want)
			}
		})
	}
}

func TestStartUp(t *testing.T) {
	given := time.Unix(1_700_000_000, 0)
	c := newCollector(2 * time.Second)
	for i, startMs := range []int{900, 1200, 3000, 2500} {
		cam := string(rune('a' + i))
		c.stored(segmenter.Segment{Camera: cam, Start: given.Add(time.Duration(startMs+4000) * time.Millisecond), Duration: 2 * time.Second}, 0)
		c.stored(segmenter.Segment{Camera: cam, Start: given.Add(time.Duration(startMs) * time.Millisecond), Duration: 4 * time.Second}, 0) // the first, stored later
	}
	got := c.startUp([]string{"a", "b", "c", "d", "e"}, given)
	want := StartUpStats{Cameras: 5, Recorded: 4, FirstSegmentP50S: 1.2, FirstSegmentP90S: 2.5, FirstSegmentMaxS: 3}
	if got != want {
		t.Errorf("startUp = %+v, want %+v", got, want)
	}
}
