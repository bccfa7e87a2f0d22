package player

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseTimelineRanges(t *testing.T) {
	got, err := ParseTimelineRanges(`[
		{"start_ts": 1000, "end_ts": 2000, "fill": "#F00", "color": "#0f0"},
		{"ini": "3000", "end": "4000", "color": "rgba(0, 0, 255, 0.5)"},
		{"start_ts": 5000.0, "end_ts": 5000},
		{"ini": 6000, "end": 7000, "fill": "", "color": "#abc"}
	]`, "#123")
	if err != nil {
		t.Fatal(err)
	}
	want := []Range{
		{StartMs: 1000, EndMs: 2000, Color: "#f00"},
		{StartMs: 3000, EndMs: 4000, Color: "rgba(0,0,255,0.5)"},
		{StartMs: 5000, EndMs: 5000, Color: "#123"},
		{StartMs: 6000, EndMs: 7000, Color: "#abc"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestParseTimelineRangesErrors(t *testing.T) {
	tests := []struct {
		name, in, field string
		want            error
	}{
		{"not JSON", `[{`, "", ErrInvalidRanges},
		{"not an array", `{"start_ts":1,"end_ts":2}`, "", ErrInvalidRanges},
		{"trailing text", `[] []`, "", ErrInvalidRanges},
		{"null item", `[null]`, "item 0", ErrInvalidRanges},
		{"no end", `[{"start_ts":1}]`, "end_ts", ErrInvalidRanges},
		{"mixed names", `[{"start_ts":1,"end":2}]`, "end_ts", ErrInvalidRanges},
		{"no start", `[{"end":2}]`, "ini", ErrInvalidRanges},
		{"reversed", `[{"ini":5,"end":2}]`, "before", ErrInvalidRanges},
		{"negative", `[{"ini":-5,"end":2}]`, "ini", ErrInvalidRanges},
		{"fraction", `[{"ini":1.5,"end":2}]`, "ini", ErrInvalidRanges},
		{"bool", `[{"ini":true,"end":2}]`, "ini", ErrInvalidRanges},
		{"year 10000", `[{"ini":1,"end":253402300800000}]`, "end", ErrInvalidRanges},
		{"bad fill", `[{"ini":1,"end":2,"fill":"red"}]`, "fill", ErrInvalidColor},
		{"injected color", `[{"ini":1,"end":2,"color":"#fff\"><script>"}]`, "color", ErrInvalidColor},
		{"colour not a string", `[{"ini":1,"end":2,"color":5}]`, "color", ErrInvalidColor},
		{"too many", "[" + strings.Repeat(`{"ini":1,"end":2},`, MaxRanges) + `{"ini":1,"end":2}]`, "ranges", ErrInvalidRanges},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTimelineRanges(tt.in, DefaultRangeColor)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %v, want %v naming %q", err, tt.want, tt.field)
			}
		})
	}
}

// FuzzParseTimelineRanges checks that accepted ranges are ordered, within
// the years 1970 to 9999, and coloured with a colour ParseColor accepts.
func FuzzParseTimelineRanges(f *testing.F) {
	for _, s := range []string{
		`[{"start_ts":1000,"end_ts":2000,"fill":"#f00"}]`,
		`[{"ini":"3000","end":"4000","color":"rgba(0, 0, 255, 0.5)"}]`,
		`[{"start_ts":5000.0,"end_ts":5000}]`,
		`[null]`, `[{"ini":5,"end":2}]`, `{}`, `[{"ini":1,"end":2,"color":"#fff\"><script>"}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseTimelineRanges(s, DefaultRangeColor)
		if err != nil {
			if !errors.Is(err, ErrInvalidRanges) && !errors.Is(err, ErrInvalidColor) {
				t.Fatalf("error %v wraps neither sentinel", err)
			}
			return
		}
		if len(rs) > MaxRanges {
			t.Fatalf("%d ranges", len(rs))
		}
		for _, r := range rs {
			if r.StartMs < 0 || r.EndMs < r.StartMs || r.EndMs > maxTimestampMs {
				t.Fatalf("range %+v out of bounds", r)
			}
			if c, err := ParseColor(r.Color); err != nil || c != r.Color {
				t.Fatalf("range colour %q not canonical: %q, %v", r.Color, c, err)
			}
		}
	})
}
