package metrics

import "github.com/prometheus/client_golang/prometheus"

// RTMP holds the metrics of the RTMP push server.
type RTMP struct {
	// Connections counts the connections accepted
	// (vigia_rtmp_connections_total).
	Connections prometheus.Counter
	// Refused counts the publishers refused, by reason
	// (vigia_rtmp_refused_total).
	Refused *prometheus.CounterVec
	// Errors counts the connections closed for bad input, by reason
	// (vigia_rtmp_errors_total).
	Errors *prometheus.CounterVec
}

// NewRTMP creates and registers the RTMP push server's metrics.
func NewRTMP(reg prometheus.Registerer) *RTMP {
	m := &RTMP{
		Connections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_rtmp_connections_total", Help: "Connections accepted by the RTMP push server."}),
		Refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigia_rtmp_refused_total", Help: "RTMP publishers refused, by reason."}, []string{"reason"}),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigia_rtmp_errors_total", Help: "RTMP push connections closed for bad input, by reason."}, []string{"reason"}),
	}
	reg.MustRegister(m.Connections, m.Refused, m.Errors)
	return m
}
