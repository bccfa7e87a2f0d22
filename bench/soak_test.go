package bench

import (
	"time"

	"math"
	"strings"
	"testing"
)

func TestGrowth(t *testing.T) {
	cases := []struct {
		name string
		ys   []float64
		want float64
	}{
		{"flat", []float64{100, 100, 100, 100}, 0},
		// 100 → 103 over 3 hours around a mean of 101.5: 1 per hour.
		{"rising", []float64{100, 101, 102, 103}, 100.0 / 101.5},
		{"noise without trend", []float64{100, 102, 98, 100, 102, 98}, math.NaN()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			xs := make([]float64, len(tc.ys))
			for i := range xs {
				xs[i] = float64(i) * 3600
			}
			got := growth(xs, tc.ys)
			if math.IsNaN(tc.want) {
				if math.Abs(got) > 1 {
					t.Errorf("growth %.3f %%/h, want about 0", got)
				}
				return
			}
			if math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("growth %.6f %%/h, want %.6f", got, tc.want)
			}
		})
	}
}

func TestSoakCheck(t *testing.T) {
	var nilSoak *Soak
	if err := nilSoak.Check(1); err == nil {
		t.Error("no soak passed the check")
	}
	flat := &Soak{Samples: make([]Sample, 3), RSSGrowthPctPerHour: 0.4, GoroutineGrowthPctPerHr: -0.1, OpenFileGrowthPctPerHr: 0}
	if err := flat.Check(1); err != nil {
		t.Errorf("flat soak failed: %v", err)
	}
	rising := &Soak{Samples: make([]Sample, 3), RSSGrowthPctPerHour: 3.5, GoroutineGrowthPctPerHr: 0.2, OpenFileGrowthPctPerHr: 1.5}
	err := rising.Check(1)
	if err == nil || !strings.Contains(err.Error(), "resident set") || !strings.Contains(err.Error(), "open files") || strings.Contains(err.Error(), "goroutines") {
		t.Errorf("rising soak: %v, want resident set and open files named", err)
	}
}

func TestSamplingPhase(t *testing.T) {
	sp := sampling{every: 20 * time.Second, cycle: 30 * time.Second, offset: 25 * time.Second}
	if got := sp.interval(); got != 30*time.Second {
		t.Errorf("interval %v, want 30s (20s rounded up to the cycle)", got)
	}
	base := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC) // a multiple of 30 s
	for _, tc := range []struct{ at, want time.Duration }{
		{0, 25 * time.Second},
		{10 * time.Second, 15 * time.Second},
		{25 * time.Second, 30 * time.Second}, // exactly at the phase: the next one
		{29 * time.Second, 26 * time.Second},
	} {
		now := base.Add(tc.at)
		got := sp.firstWait(now)
		if got != tc.want {
			t.Errorf("at +%v: wait %v, want %v", tc.at, got, tc.want)
		}
		if at := now.Add(got); at.Sub(at.Truncate(sp.cycle)) != sp.offset {
			t.Errorf("at +%v: first sample %v is not %v into a cycle", tc.at, at, sp.offset)
		}
	}
	if got := (sampling{every: 20 * time.Second}).firstWait(base); got != 0 {
		t.Errorf("no cycle: wait %v, want 0", got)
	}
	if got := (sampling{every: 60 * time.Second, cycle: 30 * time.Second}).interval(); got != time.Minute {
		t.Errorf("a multiple of the cycle is kept: %v", got)
	}
}
