package bench

import (
	"context"
	"fmt"
)

// ImagingStats are the thumbnail and motion detection work of the
// measured window, from the recorder's counters (docs/metrics.md): the
// CPU time the decoder processes spent on their requests.
type ImagingStats struct {
	// ThumbCPUPercentPerCamera is thumbnail and snapshot CPU, in % of one
	// core per camera.
	ThumbCPUPercentPerCamera float64 `json:"thumb_cpu_percent_per_camera"`
	// MotionCPUPercentPerCamera is motion detection CPU, in % of one core
	// per camera.
	MotionCPUPercentPerCamera float64 `json:"motion_cpu_percent_per_camera"`
	// TotalCPUPercentPerCamera is their sum.
	TotalCPUPercentPerCamera float64 `json:"total_cpu_percent_per_camera"`
	// Thumbnails, Dropped: minute and hourly thumbnails stored and dropped.
	Thumbnails float64 `json:"thumbnails"`
	Dropped    float64 `json:"thumbnails_dropped"`
	// Triggers, Decoded and Events: motion triggers, frames decoded to
	// confirm, events published.
	Triggers float64 `json:"motion_triggers"`
	Decoded  float64 `json:"motion_decoded_frames"`
	Events   float64 `json:"motion_events"`
	// Err says why the counters could not be read.
	Err string `json:"error,omitempty"`
}

// imagingCounters reads the thumbnail and motion counters.
func (r *run) imagingCounters(ctx context.Context) (map[string]float64, error) {
	samples, err := scrapeMetrics(ctx, r.app.URL()+"/metrics")
	if err != nil {
		return nil, err
	}
	c := map[string]float64{}
	for _, s := range samples {
		switch s.name {
		case "vigia_thumbnail_images_total":
			if k := s.label("kind"); k == "minute" || k == "hourly" {
				c["thumbs"] += s.value
			}
		case "vigia_thumbnail_cpu_seconds_total", "vigia_motion_cpu_seconds_total",
			"vigia_thumbnail_dropped_total", "vigia_motion_triggers_total",
			"vigia_motion_decoded_frames_total", "vigia_motion_events_total":
			c[s.name] += s.value
		}
	}
	return c, nil
}

// imagingStats is the difference of two readings over windowS seconds.
func imagingStats(c0, c1 map[string]float64, err0, err1 error, windowS float64, cameras int) *ImagingStats {
	if err := firstErr(err0, err1); err != nil {
		return &ImagingStats{Err: err.Error()}
	}
	d := func(k string) float64 { return c1[k] - c0[k] }
	pct := func(k string) float64 {
		if windowS <= 0 || cameras <= 0 {
			return 0
		}
		return 100 * d(k) / windowS / float64(cameras)
	}
	s := &ImagingStats{
		ThumbCPUPercentPerCamera:  pct("vigia_thumbnail_cpu_seconds_total"),
		MotionCPUPercentPerCamera: pct("vigia_motion_cpu_seconds_total"),
		Thumbnails:                d("thumbs"),
		Dropped:                   d("vigia_thumbnail_dropped_total"),
		Triggers:                  d("vigia_motion_triggers_total"),
		Decoded:                   d("vigia_motion_decoded_frames_total"),
		Events:                    d("vigia_motion_events_total"),
	}
	s.TotalCPUPercentPerCamera = s.ThumbCPUPercentPerCamera + s.MotionCPUPercentPerCamera
	return s
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// TargetImagingCPUPercent is the most thumbnail plus motion CPU per 720p
// camera at 15 fps, in % of one core.
const TargetImagingCPUPercent = 1.0

// text returns the report lines of s.
func (s *ImagingStats) text() [][2]string {
	if s.Err != "" {
		return [][2]string{{"thumbs + motion", "not measured: " + s.Err}}
	}
	return [][2]string{
		{"thumbs + motion CPU", fmt.Sprintf("%.4f %% of one core per camera in the decoder processes (thumbnails %.4f %%, motion %.4f %%; target < %.0f %%)%s",
			s.TotalCPUPercentPerCamera, s.ThumbCPUPercentPerCamera, s.MotionCPUPercentPerCamera,
			TargetImagingCPUPercent, verdict(s.TotalCPUPercentPerCamera < TargetImagingCPUPercent))},
		{"thumbs + motion work", fmt.Sprintf("%.0f thumbnails (%.0f dropped); motion: %.0f triggers, %.0f frames decoded, %.0f events",
			s.Thumbnails, s.Dropped, s.Triggers, s.Decoded, s.Events)},
	}
}
