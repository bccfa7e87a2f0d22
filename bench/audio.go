package bench

import (
	"context"
	"fmt"
)

// Audio codecs of the synthetic cameras (--audio): the synthcam names, and
// what the report calls them.
var audioCodecs = map[string]string{
	"aac":  "AAC-LC 16 kHz mono, recorded as it is",
	"pcmu": "G.711 µ-law 8 kHz mono, transcoded to AAC-LC 8 kHz",
	"pcma": "G.711 A-law 8 kHz mono, transcoded to AAC-LC 8 kHz",
	"opus": "Opus 48 kHz mono, transcoded to AAC-LC 16 kHz",
}

// transcoded reports whether the recorder transcodes the audio of codec.
func transcoded(codec string) bool { return codec == "pcmu" || codec == "pcma" || codec == "opus" }

// TargetAudioCPUPercent is the most audio transcoding CPU per camera of
// 8 kHz mono G.711, in % of one core.
const TargetAudioCPUPercent = 0.05

// AudioStats is the audio transcoding of the measured window, from the
// recorder's counters (docs/metrics.md): the CPU time measured on the
// threads that transcode, and the audio they transcoded.
type AudioStats struct {
	// Codec is the cameras' audio codec (synthcam's name).
	Codec string `json:"codec"`
	// CPUPercentPerCamera is transcoding CPU in % of one core per camera
	// whose audio is transcoded: CPU time over seconds of audio.
	CPUPercentPerCamera float64 `json:"cpu_percent_per_camera"`
	// CPUSeconds is the transcoding CPU time of the window.
	CPUSeconds float64 `json:"cpu_s"`
	// Cameras is the audio transcoded per second of the window: the
	// cameras transcoded at once.
	Cameras float64 `json:"cameras"`
	// Unrecorded counts runs of cameras whose audio could not be
	// transcoded.
	Unrecorded float64 `json:"unrecorded"`
	// Err says why the counters could not be read.
	Err string `json:"error,omitempty"`
}

// audioCounters reads the audio transcoding counters.
func (r *run) audioCounters(ctx context.Context) (map[string]float64, error) {
	samples, err := scrapeMetrics(ctx, r.app.URL()+"/metrics")
	if err != nil {
		return nil, err
	}
	c := map[string]float64{}
	for _, s := range samples {
		switch s.name {
		case "vigia_audio_transcode_cpu_seconds_total", "vigia_audio_transcoded_seconds_total", "vigia_audio_unrecorded_tracks_total":
			c[s.name] += s.value
		}
	}
	return c, nil
}

// audioStats is the difference of two readings over windowS seconds; nil
// when the cameras' audio is not transcoded.
func audioStats(codec string, c0, c1 map[string]float64, err0, err1 error, windowS float64) *AudioStats {
	if !transcoded(codec) {
		return nil
	}
	s := &AudioStats{Codec: codec}
	if err := firstErr(err0, err1); err != nil {
		s.Err = err.Error()
		return s
	}
	d := func(k string) float64 { return c1[k] - c0[k] }
	s.CPUSeconds = d("vigia_audio_transcode_cpu_seconds_total")
	audio := d("vigia_audio_transcoded_seconds_total")
	if audio > 0 {
		s.CPUPercentPerCamera = 100 * s.CPUSeconds / audio
	}
	if windowS > 0 {
		s.Cameras = audio / windowS
	}
	s.Unrecorded = d("vigia_audio_unrecorded_tracks_total")
	return s
}

// text returns the report lines of s.
func (s *AudioStats) text() [][2]string {
	if s.Err != "" {
		return [][2]string{{"audio transcoding", "not measured: " + s.Err}}
	}
	target := ""
	if s.Codec != "opus" {
		target = fmt.Sprintf("; target ≤ %.2f %%)%s", TargetAudioCPUPercent, verdict(s.CPUPercentPerCamera <= TargetAudioCPUPercent))
	} else {
		target = ")"
	}
	return [][2]string{
		{"audio transcoding CPU", fmt.Sprintf("%.4f %% of one core per camera (%s%s",
			s.CPUPercentPerCamera, audioCodecs[s.Codec], target)},
		{"audio transcoding work", fmt.Sprintf("%.1f cameras' audio at once, %.2f s of CPU in the window (measured on the transcoding threads); %.0f runs without audio",
			s.Cameras, s.CPUSeconds, s.Unrecorded)},
	}
}
