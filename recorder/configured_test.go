package recorder

import (
	"testing"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/ingest"
)

// TestConfigured: the operator's cameras are trusted, and record sound
// only when sound is 1.
func TestConfigured(t *testing.T) {
	got := Configured([]config.Camera{
		{ID: "door", URL: "rtsp://10.0.0.2/s", Transport: "tcp", Sound: 1, HistoryDays: 3},
		{ID: "yard", URL: "rtsp://10.0.0.3/s"},
	})
	want := []ingest.Camera{
		{ID: "door", URL: "rtsp://10.0.0.2/s", Transport: "tcp", Sound: true, Trusted: true},
		{ID: "yard", URL: "rtsp://10.0.0.3/s", Trusted: true},
	}
	if len(got) != len(want) {
		t.Fatalf("Configured = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("camera %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}
