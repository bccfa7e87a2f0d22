package app

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigia/vigia/api"
	"github.com/vigia/vigia/metrics"
)

// instrumentHTTP wraps the node's mux so every request is counted in
// vigia_http_requests_total{route,code} and timed in
// vigia_http_request_duration_seconds{route}. The route is the mux pattern
// that served the request ("GET /api/v4/cameras"), "unmatched" for none,
// so the label set stays bounded.
func (a *App) instrumentHTTP(mux *http.ServeMux) http.Handler {
	m := metrics.NewHTTP(a.reg)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		mux.ServeHTTP(sw, r)
		route := r.Pattern // set by the mux on r
		if route == "" {
			route = "unmatched"
		}
		m.Requests.WithLabelValues(route, strconv.Itoa(sw.code)).Inc()
		m.Duration.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// statusWriter remembers the status code written.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.code, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(p []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(p)
}

// Flush lets streaming handlers flush through the wrapper.
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// countingExporter counts the downloadable video jobs the API submits, in
// vigia_export_jobs_submitted_total{result}.
type countingExporter struct {
	api.Exporter
	submitted *prometheus.CounterVec
}

// countExports wraps the API's exporter with the export job counter.
func (a *App) countExports(e api.Exporter) api.Exporter {
	return countingExporter{Exporter: e, submitted: metrics.NewExport(a.reg).Submitted}
}

func (c countingExporter) Submit(ctx context.Context, j api.Job) error {
	err := c.Exporter.Submit(ctx, j)
	if err != nil {
		c.submitted.WithLabelValues("error").Inc()
	} else {
		c.submitted.WithLabelValues("ok").Inc()
	}
	return err
}
