package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// TestRunAudioG711: with G.711 cameras the report gives the transcoding
// cost per camera, measured over the window on all of them.
func TestRunAudioG711(t *testing.T) {
	o := Options{
		Cameras: 3, Duration: 6 * time.Second, Warmup: 3 * time.Second, Backend: "fs", Codec: "h264",
		Audio: true, AudioCodec: "pcmu", Segment: 2 * time.Second, Dir: t.TempDir(),
		SynthCommand: testSynthCommand, Log: zaptest.NewLogger(t), Progress: testWriter{t},
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	a := rep.AudioTranscode
	if a == nil || a.Err != "" || a.Codec != "pcmu" || rep.AudioCodec != "pcmu" {
		t.Fatalf("audio report %+v (codec %q)", a, rep.AudioCodec)
	}
	if a.CPUSeconds <= 0 || a.CPUPercentPerCamera <= 0 || a.Cameras < 2.5 || a.Cameras > 3.5 || a.Unrecorded != 0 {
		t.Fatalf("audio transcoding not measured on the 3 cameras: %+v", a)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"3 cameras h264 + G.711", "audio transcoding CPU", "G.711 µ-law 8 kHz mono, transcoded to AAC-LC 8 kHz", "target ≤ 0.05 %"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, text.String())
		}
	}
}

// TestAudioOptions: an unknown audio codec is refused; AAC needs no
// transcoding report.
func TestAudioOptions(t *testing.T) {
	o := Defaults()
	o.AudioCodec = "mp3"
	if err := o.withDefaults().validate(); !errors.Is(err, ErrBadOptions) {
		t.Fatalf("audio codec mp3: %v, want ErrBadOptions", err)
	}
	if s := audioStats("aac", nil, nil, nil, nil, 10); s != nil {
		t.Fatalf("AAC transcoding report %+v, want none", s)
	}
	s := audioStats("opus", map[string]float64{"vigia_audio_transcode_cpu_seconds_total": 1, "vigia_audio_transcoded_seconds_total": 100},
		map[string]float64{"vigia_audio_transcode_cpu_seconds_total": 1.2, "vigia_audio_transcoded_seconds_total": 300}, nil, nil, 100)
	if math.Abs(s.CPUPercentPerCamera-0.1) > 1e-9 || s.Cameras != 2 || math.Abs(s.CPUSeconds-0.2) > 1e-9 {
		t.Fatalf("stats %+v, want 0.1 %% per camera on 2 cameras", s)
	}
}
