package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ThumbStats is what the thumbnail metrics read when scraped.
type ThumbStats struct {
	// Minute, Hourly and Snapshots count the images stored.
	Minute, Hourly, Snapshots uint64
	// Dropped counts thumbnails not made because the queue was full.
	Dropped uint64
	// DecodeErrors counts keyframes that could not be decoded or encoded.
	DecodeErrors uint64
	// StoreErrors counts images that could not be stored.
	StoreErrors uint64
	// Unreadable counts keyframes a snapshot could not read back.
	Unreadable uint64
	// Queued is the number of thumbnails waiting for a worker.
	Queued int
	// CPU is the decoder processes' CPU time for the images made.
	CPU time.Duration
}

// RegisterThumbs registers the thumbnail metrics (vigia_thumbnail_*),
// reported by stats, and by available (whether the node can decode
// video), when scraped.
func RegisterThumbs(reg prometheus.Registerer, stats func() ThumbStats, available func() bool) {
	counter := func(name, help string, f func(ThumbStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return f(stats()) })
	}
	images := func(kind string, f func(ThumbStats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vigia_thumbnail_images_total", Help: "Images stored, by kind (minute, hourly, snapshot).",
			ConstLabels: prometheus.Labels{"kind": kind},
		}, func() float64 { return float64(f(stats())) })
	}
	reg.MustRegister(
		images("minute", func(s ThumbStats) uint64 { return s.Minute }),
		images("hourly", func(s ThumbStats) uint64 { return s.Hourly }),
		images("snapshot", func(s ThumbStats) uint64 { return s.Snapshots }),
		counter("vigia_thumbnail_dropped_total", "Thumbnails not made because the queue was full.",
			func(s ThumbStats) float64 { return float64(s.Dropped) }),
		counter("vigia_thumbnail_decode_errors_total", "Keyframes that could not be decoded or encoded.",
			func(s ThumbStats) float64 { return float64(s.DecodeErrors) }),
		counter("vigia_thumbnail_store_errors_total", "Images that could not be stored.",
			func(s ThumbStats) float64 { return float64(s.StoreErrors) }),
		counter("vigia_thumbnail_unreadable_keyframes_total", "Keyframes a snapshot could not read back from the spool file because their segment had ended.",
			func(s ThumbStats) float64 { return float64(s.Unreadable) }),
		counter("vigia_thumbnail_cpu_seconds_total", "CPU time the decoder processes spent decoding, scaling and encoding the images made.",
			func(s ThumbStats) float64 { return s.CPU.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "vigia_thumbnail_queue_length", Help: "Thumbnails waiting for a worker."},
			func() float64 { return float64(stats().Queued) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "vigia_thumbnail_available", Help: "1 when this node can decode video (cgo, decoder processes), 0 otherwise."},
			func() float64 {
				if available() {
					return 1
				}
				return 0
			}),
	)
}

// MotionStats is what the motion metrics read when scraped.
type MotionStats struct {
	// Events counts events published; PublishErrors those not queued.
	Events, PublishErrors uint64
	// Dropped counts units not analysed because a queue was full.
	Dropped uint64
	// Looks counts triggers (decoding started); Decoded the frames decoded.
	Looks, Decoded uint64
	// Unreadable counts looks given up because a frame could not be read
	// back.
	Unreadable uint64
	// CPU is the decoder processes' CPU time for the detectors.
	CPU time.Duration
}

// RegisterMotion registers the motion detection metrics
// (vigia_motion_*), reported by stats when scraped.
func RegisterMotion(reg prometheus.Registerer, stats func() MotionStats) {
	counter := func(name, help string, f func(MotionStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return f(stats()) })
	}
	reg.MustRegister(
		counter("vigia_motion_events_total", "Motion events published.",
			func(s MotionStats) float64 { return float64(s.Events) }),
		counter("vigia_motion_publish_errors_total", "Motion events that could not be queued for NATS.",
			func(s MotionStats) float64 { return float64(s.PublishErrors) }),
		counter("vigia_motion_dropped_units_total", "Video units not analysed because a camera's motion queue was full.",
			func(s MotionStats) float64 { return float64(s.Dropped) }),
		counter("vigia_motion_triggers_total", "Times the frame-size trigger started decoding.",
			func(s MotionStats) float64 { return float64(s.Looks) }),
		counter("vigia_motion_decoded_frames_total", "Frames decoded to confirm motion.",
			func(s MotionStats) float64 { return float64(s.Decoded) }),
		counter("vigia_motion_unreadable_total", "Looks and keyframe checks given up because a frame could not be read back from the spool file (its segment had ended).",
			func(s MotionStats) float64 { return float64(s.Unreadable) }),
		counter("vigia_motion_cpu_seconds_total", "CPU time the decoder processes spent on the motion detectors' requests.",
			func(s MotionStats) float64 { return s.CPU.Seconds() }),
	)
}

// DecoderStats is what the decoder process metrics read when scraped.
type DecoderStats struct {
	// Requests counts the requests a process answered.
	Requests uint64
	// Restarts counts the processes killed and replaced, by reason.
	Restarts map[string]uint64
	// StartFailures counts processes that did not start.
	StartFailures uint64
	// Processes is the number of processes running.
	Processes int
	// CPU is the CPU time of every decoder process, exited ones included.
	CPU time.Duration
}

// RegisterDecoders registers the decoder process metrics
// (vigia_decoder_*): stats reports the pool's counters when scraped, with
// a restart series for each of reasons from 0, and resident the resident
// set of its processes together.
func RegisterDecoders(reg prometheus.Registerer, reasons []string, stats func() DecoderStats, resident func() int64) {
	restarts := func(reason string) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "vigia_decoder_restarts_total", Help: "Decoder processes killed and replaced, by reason (crash, memory, timeout, protocol, canceled, exited).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(stats().Restarts[reason]) })
	}
	for _, r := range reasons {
		reg.MustRegister(restarts(r))
	}
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "vigia_decoder_requests_total", Help: "Requests a decoder process answered (pictures and errors it reported)."},
			func() float64 { return float64(stats().Requests) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "vigia_decoder_start_failures_total", Help: "Decoder processes that did not start."},
			func() float64 { return float64(stats().StartFailures) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "vigia_decoder_cpu_seconds_total", Help: "CPU time of the decoder processes, exited ones included."},
			func() float64 { return stats().CPU.Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "vigia_decoder_processes", Help: "Decoder processes running."},
			func() float64 { return float64(stats().Processes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "vigia_decoder_resident_bytes", Help: "Resident set of the decoder processes together."},
			func() float64 { return float64(resident()) }),
	)
}
