package storage

import (
	"testing"
	"time"
)

func TestMaxSegmentDuration(t *testing.T) {
	for _, tc := range []struct {
		name         string
		target, want time.Duration
	}{
		{"short target", 2 * time.Second, 62 * time.Second},
		{"one minute", 60 * time.Second, 120 * time.Second},
		{"longest target", 10 * time.Minute, 20 * time.Minute},
		{"no target", 0, 120 * time.Second},
	} {
		if got := MaxSegmentDuration(tc.target); got != tc.want {
			t.Errorf("%s: MaxSegmentDuration(%v) = %v, want %v", tc.name, tc.target, got, tc.want)
		}
	}
}
