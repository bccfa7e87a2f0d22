// Package metrics defines Vigia's Prometheus metrics (docs/metrics.md). All
// names carry the vigia_ prefix and base units.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Recorder holds the metrics of a recorder node.
type Recorder struct {
	CamerasByStatus   *prometheus.GaugeVec
	BytesReceived     prometheus.Counter
	FramesReceived    prometheus.Counter
	FramesDropped     *prometheus.CounterVec
	DecodeErrors      prometheus.Counter
	SegmentsWritten   prometheus.Counter
	SegmentsFailed    prometheus.Counter
	SegmentsDropped   *prometheus.CounterVec
	UploadLatency     prometheus.Histogram
	SpoolBytes        prometheus.GaugeFunc
	SpoolOldest       prometheus.GaugeFunc
	Reconnects        prometheus.Counter
	ConnectAttempts   prometheus.Counter
	CameraProbes      *prometheus.CounterVec
	Panics            prometheus.Counter
	StatusPublishFail prometheus.Counter
	RecordedRatio     *prometheus.GaugeVec
	GapRecords        *prometheus.CounterVec
}

// NewRegistry returns a registry with the Go and process collectors.
func NewRegistry() *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// NewRecorder creates and registers the recorder metrics. spoolBytes and
// spoolOldestSeconds report the spool's state when scraped.
func NewRecorder(reg prometheus.Registerer, spoolBytes, spoolOldestSeconds func() float64) *Recorder {
	m := &Recorder{
		CamerasByStatus: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "vigia_cameras", Help: "Cameras recorded by this node, by status text."}, []string{"status"}),
		BytesReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_received_bytes_total", Help: "Media payload bytes received from cameras."}),
		FramesReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_received_frames_total", Help: "Access units received from cameras."}),
		FramesDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigia_dropped_frames_total", Help: "Access units not recorded, by reason."}, []string{"reason"}),
		DecodeErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_decode_errors_total", Help: "RTP packets or payloads that could not be decoded."}),
		SegmentsWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_segments_stored_total", Help: "Segments stored in object storage."}),
		SegmentsFailed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_segment_upload_failures_total", Help: "Failed segment upload attempts (retried)."}),
		SegmentsDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigia_segments_dropped_total", Help: "Segments dropped before storage, by reason."}, []string{"reason"}),
		UploadLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "vigia_segment_upload_latency_seconds", Help: "Time from a segment's end to the object stored.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}}),
		SpoolBytes: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vigia_spool_bytes", Help: "Bytes held in the local spool."}, spoolBytes),
		SpoolOldest: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vigia_spool_oldest_segment_age_seconds", Help: "Age of the oldest finished segment waiting for upload."}, spoolOldestSeconds),
		Reconnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_camera_reconnects_total", Help: "Camera connections lost and retried."}),
		ConnectAttempts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_camera_connect_attempts_total", Help: "Camera connection attempts."}),
		CameraProbes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigia_camera_probes_total", Help: "Liveness probes (TCP connections) of cameras that are down, by result (ok, failed)."}, []string{"result"}),
		Panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_camera_panics_total", Help: "Panics recovered in camera goroutines."}),
		StatusPublishFail: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_nats_publish_failures_total", Help: "Status or segment notices that could not be published."}),
		RecordedRatio: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "vigia_camera_recorded_ratio", Help: "Share of a camera's wall-clock time covered by stored segments, over the window (1h, 24h)."},
			[]string{"camera", "window"}),
		GapRecords: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigia_gap_records_total", Help: "Gap records written, by cause."}, []string{"cause"}),
	}
	reg.MustRegister(m.CamerasByStatus, m.BytesReceived, m.FramesReceived, m.FramesDropped, m.DecodeErrors,
		m.SegmentsWritten, m.SegmentsFailed, m.SegmentsDropped, m.UploadLatency, m.SpoolBytes, m.SpoolOldest,
		m.Reconnects, m.ConnectAttempts, m.Panics, m.StatusPublishFail, m.RecordedRatio, m.GapRecords)
	reg.MustRegister(m.CameraProbes)
	m.CameraProbes.WithLabelValues("ok")
	m.CameraProbes.WithLabelValues("failed")
	// Known reasons are exported at 0 from the start, so a rate or an alert
	// on them has a series before the first drop.
	for _, r := range []string{"queue_full", "camera_over_rate", "no_keyframe", "no_params", "spool_write"} {
		m.FramesDropped.WithLabelValues(r)
	}
	m.SegmentsDropped.WithLabelValues("spool_full")
	return m
}
