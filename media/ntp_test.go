package media

import (
	"testing"
	"time"
)

func TestNTPTime(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want uint64
	}{
		{time.Unix(0, 0), ntpEpochOffset << 32},
		{time.Unix(1, 5e8), (ntpEpochOffset+1)<<32 | 1<<31},
		{time.Unix(1, 250e6), (ntpEpochOffset+1)<<32 | 1<<30},
		// 2026-11-29T12:00:00.9Z: .9 s is 0xE6666666 of a second.
		{time.Date(2026, 11, 29, 12, 0, 0, 9e8, time.UTC), uint64(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).Unix()+ntpEpochOffset)<<32 | 0xE6666666},
	} {
		if got := NTPTime(tc.t); got != tc.want {
			t.Errorf("NTPTime(%v) = %#x, want %#x", tc.t, got, tc.want)
		}
	}
	// NTPToTime is its inverse, to the nanosecond below.
	for _, ns := range []int64{0, 1, 999_999_999, 123_456_789, 900_000_000} {
		at := time.Date(2026, 11, 29, 12, 0, 0, int(ns), time.UTC)
		back := NTPToTime(NTPTime(at))
		if d := at.Sub(back); d < 0 || d > time.Nanosecond {
			t.Errorf("NTPToTime(NTPTime(%v)) = %v, %v off", at, back, d)
		}
	}
}
