package app

import (
	"context"
	"math"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/status"
)

// Completeness upkeep (docs/status.md, Completeness).
const (
	// completenessEvery is how often the ratios are worked out.
	completenessEvery = time.Minute
	// completenessFirst is the wait before the first time, for the
	// cameras to start.
	completenessFirst = 10 * time.Second
	// completenessStep is the change of a ratio that publishes the status
	// again.
	completenessStep = 0.001
)

// completeness works out each recorded camera's completeness, puts it in
// the camera's status and in vigia_camera_recorded_ratio.
type completeness struct {
	a   *App
	cov *catalogue.Coverage

	mu        sync.Mutex
	published map[string]status.Completeness // the ratios last published
	stop      chan struct{}
	done      chan struct{}
}

// startCompleteness starts the upkeep of the recorder's cameras.
func (a *App) startCompleteness() {
	c := &completeness{a: a, cov: catalogue.NewCoverage(a.cat), published: map[string]status.Completeness{},
		stop: make(chan struct{}), done: make(chan struct{})}
	a.completeness = c
	metrics.RegisterGapJournal(a.reg, func() float64 { return float64(a.journal.Stats().Dropped) })
	go c.run() // exits when closeCompleteness is called
}

// closeCompleteness stops the upkeep.
func (a *App) closeCompleteness() {
	if c := a.completeness; c != nil {
		close(c.stop)
		<-c.done
	}
}

func (c *completeness) run() {
	defer close(c.done)
	t := time.NewTimer(completenessFirst)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		c.update()
		t.Reset(completenessEvery)
	}
}

// update lists what the cameras need, refreshes the gauge, and publishes
// the status of each camera whose ratios moved.
func (c *completeness) update() {
	ctx, cancel := context.WithTimeout(context.Background(), completenessEvery)
	defer cancel()
	cams := c.a.rec.Cameras()
	if err := c.cov.Update(ctx, cams); err != nil {
		c.a.log.Warn("recorded time not listed", zap.String("component", "completeness"), zap.Error(err))
	}
	g := c.a.metrics.RecordedRatio
	seen := map[string]bool{}
	var changed []string
	for _, id := range cams {
		r, ok := c.cov.Ratios(id)
		if !ok {
			continue
		}
		seen[id] = true
		g.WithLabelValues(id, "1h").Set(r.Hour)
		g.WithLabelValues(id, "24h").Set(r.Day)
		c.mu.Lock()
		last, had := c.published[id]
		c.mu.Unlock()
		if !had || math.Abs(r.Hour-last.Hour) >= completenessStep || math.Abs(r.Day-last.Day) >= completenessStep {
			changed = append(changed, id)
		}
	}
	c.mu.Lock()
	for id := range c.published {
		if !seen[id] {
			delete(c.published, id)
			g.DeleteLabelValues(id, "1h")
			g.DeleteLabelValues(id, "24h")
		}
	}
	c.mu.Unlock()
	for _, id := range changed {
		if st, ok := c.a.rec.Status(id); ok {
			c.a.publishStatus(st)
		}
	}
}

// fill puts the camera's ratios in s, and remembers them as published.
func (c *completeness) fill(s *status.Status) {
	r, ok := c.cov.Ratios(s.Camera)
	if !ok {
		return
	}
	s.Recorded = &r
	c.mu.Lock()
	c.published[s.Camera] = r
	c.mu.Unlock()
}

// recorded returns the ratios of a camera recorded here.
func (a *App) recorded(camera string) (status.Completeness, bool) {
	if a.completeness == nil {
		return status.Completeness{}, false
	}
	return a.completeness.cov.Ratios(camera)
}
