package app

import (
	"runtime"

	"go.uber.org/zap"

	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/recorder"
	"github.com/vigia/vigia/segmenter"
)

// startCapacity works out the node's capacity once, at start (the CPUs
// and the spool disk's room then), logs it and exports it
// (vigia_node_capacity_cameras) with the spool's quota, which is its
// QuotaBytes, and backlog (read from a.spool when scraped).
func (a *App) startCapacity() {
	r := a.cfg.Recording
	a.capacityPlan = recorder.PlanCapacity(r, runtime.GOMAXPROCS(0), segmenter.SpoolRoom(r.SpoolDir))
	a.capacityPlan.Log(a.log.With(zap.String("component", "capacity")))
	metrics.RegisterCapacity(a.reg, func() float64 { return float64(a.capacity().Cameras) })
	metrics.RegisterSpoolQuota(a.reg,
		func() float64 { return float64(a.spool.Backlog()) },
		func() float64 { return float64(a.spool.MaxBytes()) })
}

// capacity returns how many cameras this node records at most, and why.
// It is worked out at start and does not change while the node runs.
func (a *App) capacity() recorder.Capacity { return a.capacityPlan }
