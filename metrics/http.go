package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// HTTP holds the metrics of a node's HTTP server.
type HTTP struct {
	// Requests counts the requests answered, by route pattern and status
	// code (vigia_http_requests_total).
	Requests *prometheus.CounterVec
	// Duration times them, by route pattern
	// (vigia_http_request_duration_seconds).
	Duration *prometheus.HistogramVec
}

// NewHTTP creates and registers the HTTP server's metrics.
func NewHTTP(reg prometheus.Registerer) *HTTP {
	m := &HTTP{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigia_http_requests_total", Help: "HTTP requests answered, by route pattern and status code."},
			[]string{"route", "code"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vigia_http_request_duration_seconds", Help: "Time to answer an HTTP request, by route pattern.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}},
			[]string{"route"}),
	}
	reg.MustRegister(m.Requests, m.Duration)
	return m
}

// Export holds the metrics of the API's downloadable video jobs.
type Export struct {
	// Submitted counts the jobs queued, by result (ok, error), both
	// exported from 0 (vigia_export_jobs_submitted_total).
	Submitted *prometheus.CounterVec
}

// NewExport creates and registers the export job metrics.
func NewExport(reg prometheus.Registerer) *Export {
	m := &Export{Submitted: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vigia_export_jobs_submitted_total", Help: "Downloadable video jobs queued by the API, by result (ok, error)."},
		[]string{"result"})}
	m.Submitted.WithLabelValues("ok")
	m.Submitted.WithLabelValues("error")
	reg.MustRegister(m.Submitted)
	return m
}

// RejectedConnections returns the function a listener calls when it
// closes a connection for a limit: it counts it in
// vigia_rejected_connections_total{listener, reason}, every reason of the
// listener exported from 0. The listeners of one registry share the
// counter.
func RejectedConnections(reg prometheus.Registerer, listener string, reasons []string) func(reason string) {
	cv := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vigia_rejected_connections_total",
		Help: "Connections closed by a listener's limits before being served, by listener and reason.",
	}, []string{"listener", "reason"})
	if err := reg.Register(cv); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			panic(err)
		}
		cv = are.ExistingCollector.(*prometheus.CounterVec)
	}
	for _, r := range reasons {
		cv.WithLabelValues(listener, r)
	}
	return func(reason string) { cv.WithLabelValues(listener, reason).Inc() }
}
