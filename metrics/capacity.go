package metrics

import "github.com/prometheus/client_golang/prometheus"

// RegisterCapacity registers vigia_node_capacity_cameras: the cameras this
// recorder node holds (recording.max_cameras, or what its CPUs and spool
// hold), reported by cameras when scraped.
func RegisterCapacity(reg prometheus.Registerer, cameras func() float64) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vigia_node_capacity_cameras", Help: "Cameras this recorder node holds."}, cameras))
}

// RegisterSpoolQuota registers vigia_spool_backlog_bytes (finished segments
// waiting behind a newer one of their camera: what the quota counts) and
// vigia_spool_quota_bytes, reported by backlog and quota when scraped.
func RegisterSpoolQuota(reg prometheus.Registerer, backlog, quota func() float64) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vigia_spool_backlog_bytes", Help: "Bytes of finished segments waiting for storage behind a newer finished segment of their camera."}, backlog),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "vigia_spool_quota_bytes", Help: "Quota of the spool backlog; past it the oldest segments are dropped."}, quota))
}
