package recorder

import (
	"context"
	"math"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/status"
)

// Completeness upkeep (docs/status.md, Completeness).
const (
	// completenessEvery is how often the ratios are worked out.
	completenessEvery = time.Minute
	// completenessFirst is the wait before the first time, for the
	// cameras to start, and before the next time while a camera has no
	// ratios yet (its window is still shorter than 10 s).
	completenessFirst = 10 * time.Second
	// completenessStep is the change of a ratio that publishes the status
	// again.
	completenessStep = 0.001
)

// Coverage works out the share of recent time that stored segments cover
// (catalogue.Coverage in production).
type Coverage interface {
	// Stored notes a segment of camera stored, from startMs to endMs.
	Stored(camera string, startMs, endMs int64)

	// Update lists what the cameras need to work out their ratios.
	Update(ctx context.Context, cameras []string) error

	// Ratios returns camera's ratios; ok is false while unknown.
	Ratios(camera string) (status.Completeness, bool)
}

// completeness works out each recorded camera's completeness, puts it in
// the camera's status and in vigia_camera_recorded_ratio. Its goroutine
// (run) starts with the Recorder and ends at Close.
type completeness struct {
	r   *Recorder
	cov Coverage

	mu        sync.Mutex
	published map[string]status.Completeness // the ratios last published
	closeOnce sync.Once
	stop      chan struct{}
	done      chan struct{}
}

func newCompleteness(r *Recorder, cov Coverage) *completeness {
	return &completeness{r: r, cov: cov, published: map[string]status.Completeness{},
		stop: make(chan struct{}), done: make(chan struct{})}
}

// close stops the upkeep.
func (c *completeness) close() {
	c.closeOnce.Do(func() { close(c.stop) })
	<-c.done
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
		if c.update() {
			t.Reset(completenessEvery)
		} else {
			t.Reset(completenessFirst)
		}
	}
}

// update lists what the cameras need, refreshes the gauge, and publishes
// the status of each camera whose ratios moved; it reports whether every
// camera has its ratios.
func (c *completeness) update() (all bool) {
	ctx, cancel := context.WithTimeout(context.Background(), completenessEvery)
	defer cancel()
	cams := c.r.Cameras()
	if err := c.cov.Update(ctx, cams); err != nil {
		c.r.cfg.Log.Warn("recorded time not listed", zap.String("component", "completeness"), zap.Error(err))
	}
	seen := map[string]bool{}
	var changed []string
	all = true
	for _, id := range cams {
		r, ok := c.cov.Ratios(id)
		if !ok {
			all = false
			continue
		}
		seen[id] = true
		if m := c.r.cfg.Metrics; m != nil {
			m.RecordedRatio.WithLabelValues(id, "1h").Set(r.Hour)
			m.RecordedRatio.WithLabelValues(id, "24h").Set(r.Day)
		}
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
			if m := c.r.cfg.Metrics; m != nil {
				m.RecordedRatio.DeleteLabelValues(id, "1h")
				m.RecordedRatio.DeleteLabelValues(id, "24h")
			}
		}
	}
	c.mu.Unlock()
	for _, id := range changed {
		if st, ok := c.r.Status(id); ok {
			c.r.publish(st)
		}
	}
	return all
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

// Recorded returns the completeness of a camera recorded here; ok is false
// while it is unknown (or without Config.Coverage).
func (r *Recorder) Recorded(camera string) (status.Completeness, bool) {
	if r.complete == nil {
		return status.Completeness{}, false
	}
	return r.complete.cov.Ratios(camera)
}
