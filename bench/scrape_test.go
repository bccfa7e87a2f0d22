package bench

import (
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	text := `# HELP vigia_dropped_frames_total Access units not recorded, by reason.
# TYPE vigia_dropped_frames_total counter
vigia_dropped_frames_total{reason="queue_full"} 12
vigia_dropped_frames_total{camera="a,b",reason="no_keyframe"} 3
vigia_received_frames_total 4.5e+06
go_gc_duration_seconds{quantile="0.5"} 1.2e-05 1700000000000
broken_line
also{broken 1
`
	got, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, reason string
		value        float64
	}{
		{"vigia_dropped_frames_total", "queue_full", 12},
		{"vigia_dropped_frames_total", "no_keyframe", 3},
		{"vigia_received_frames_total", "", 4.5e6},
		{"go_gc_duration_seconds", "", 1.2e-5},
	}
	if len(got) != len(want) {
		t.Fatalf("%d samples, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].name != w.name || got[i].label("reason") != w.reason || got[i].value != w.value {
			t.Errorf("sample %d = %+v (reason %q), want %+v", i, got[i], got[i].label("reason"), w)
		}
	}
}

func FuzzParseSample(f *testing.F) {
	f.Add(`vigia_dropped_frames_total{reason="queue_full"} 12`)
	f.Add(`vigia_received_frames_total 4.5e+06`)
	f.Add(`x{} NaN 1`)
	f.Add(`}{`)
	f.Fuzz(func(t *testing.T, line string) {
		s, ok := parseSample(line)
		if ok && s.name == "" {
			t.Errorf("sample without a name from %q", line)
		}
		_ = s.label("reason")
	})
}
