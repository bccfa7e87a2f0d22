package bench

import (
	"math"
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
