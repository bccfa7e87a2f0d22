package metrics

import "github.com/prometheus/client_golang/prometheus"

// Cluster holds the metrics of a recorder node in a cluster.
type Cluster struct {
	// Unplaced is the number of cameras that no recorder node has room
	// for, counted by the node that would record them
	// (vigia_cluster_unplaced_cameras).
	Unplaced prometheus.Gauge
}

// NewCluster creates and registers the cluster metrics.
func NewCluster(reg prometheus.Registerer) *Cluster {
	m := &Cluster{Unplaced: prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "vigia_cluster_unplaced_cameras",
		Help: "Cameras that no recorder node has room for, counted by the node that would record them.",
	})}
	reg.MustRegister(m.Unplaced)
	return m
}

// RegisterGapJournal registers vigia_gap_records_dropped_total, reported
// by dropped (the gap records refused or pushed out of the journal's full
// queue) when scraped.
func RegisterGapJournal(reg prometheus.Registerer, dropped func() float64) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "vigia_gap_records_dropped_total", Help: "Gap records refused or pushed out of the journal's full queue."},
		dropped))
}
