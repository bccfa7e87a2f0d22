package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigia/vigia/media"
)

// AudioStats is what the audio metrics read when scraped: the sums of the
// transcoding of camera audio to AAC.
type AudioStats struct {
	// CPU is the CPU time spent transcoding.
	CPU time.Duration
	// Audio is the duration of the audio transcoded.
	Audio time.Duration
}

// Audio holds the metrics of camera audio.
type Audio struct {
	// Unrecorded counts the runs of cameras whose audio is not recorded
	// because it cannot be transcoded to AAC, by codec (PCMU, PCMA, Opus,
	// other), every codec exported from 0
	// (vigia_audio_unrecorded_tracks_total).
	Unrecorded *prometheus.CounterVec
}

// NewAudio creates and registers the audio metrics; stats reports the
// transcoding sums when scraped.
func NewAudio(reg prometheus.Registerer, stats func() AudioStats) *Audio {
	m := &Audio{Unrecorded: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vigia_audio_unrecorded_tracks_total",
		Help: "Runs of cameras whose audio is not recorded because it cannot be transcoded to AAC, by codec.",
	}, []string{"codec"})}
	for _, c := range []string{string(media.G711U), string(media.G711A), string(media.Opus), "other"} {
		m.Unrecorded.WithLabelValues(c)
	}
	reg.MustRegister(m.Unrecorded,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vigia_audio_transcode_cpu_seconds_total", Help: "CPU time spent transcoding camera audio to AAC.",
		}, func() float64 { return stats().CPU.Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vigia_audio_transcoded_seconds_total", Help: "Camera audio transcoded to AAC, in seconds of audio.",
		}, func() float64 { return stats().Audio.Seconds() }),
	)
	return m
}
