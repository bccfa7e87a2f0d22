package recorder

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vigia/vigia/status"
)

// memCoverage is a Coverage whose ratios the test sets.
type memCoverage struct {
	mu      sync.Mutex
	ratios  map[string]status.Completeness
	updates int
	stored  []string
}

func (c *memCoverage) Stored(camera string, _, _ int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stored = append(c.stored, camera)
}

func (c *memCoverage) Update(context.Context, []string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates++
	return nil
}

func (c *memCoverage) Ratios(camera string) (status.Completeness, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.ratios[camera]
	return r, ok
}

func (c *memCoverage) updated() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.updates
}

func (c *memCoverage) set(camera string, r status.Completeness) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ratios[camera] = r
}

// statusLog is a Statuses that keeps what it is given.
type statusLog struct {
	mu  sync.Mutex
	all []status.Status
}

func (l *statusLog) EnqueueStatus(s status.Status) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, s)
	return nil
}

func (l *statusLog) list() []status.Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]status.Status(nil), l.all...)
}

// The recorder works out each camera's completeness 10 s after it starts,
// again 10 s later while a camera has no ratios, then every minute, and
// publishes the camera's status with it whenever a
// ratio moves by 0.001 or more.
func TestCompletenessInStatus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cov := &memCoverage{ratios: map[string]status.Completeness{}}
		log := &statusLog{}
		r := New(Config{NodeID: "n1", Keys: testKeys, Coverage: cov, Statuses: log})
		defer r.Close()
		r.Record(cam("c1", "unsealable"), 1) // runs nothing, has a status
		settle(11 * time.Second)             // the first update: no ratios yet
		n := len(log.list())
		if n == 0 || log.list()[0].Recorded != nil || cov.updated() != 1 {
			t.Fatalf("statuses %+v after %d updates, want the camera's, without ratios, after one", log.list(), cov.updated())
		}
		cov.set("c1", status.Completeness{Hour: 0.5, Day: 0.5})
		if _, ok := r.Recorded("c1"); !ok {
			t.Fatal("completeness unknown while the coverage knows it")
		}
		if len(log.list()) != n {
			t.Fatal("a status published between updates")
		}
		settle(10 * time.Second)
		got := log.list()
		if len(got) != n+1 || got[n].Recorded == nil || got[n].Recorded.Hour != 0.5 {
			t.Fatalf("statuses after the first update: %+v, want one more with the ratios", got[n:])
		}
		// A move below the step publishes nothing; above it, the status.
		cov.set("c1", status.Completeness{Hour: 0.5004, Day: 0.5})
		settle(time.Minute)
		if len(log.list()) != n+1 {
			t.Errorf("a status published for a move of 0.0004")
		}
		cov.set("c1", status.Completeness{Hour: 0.6, Day: 0.5})
		settle(time.Minute)
		got = log.list()
		if len(got) != n+2 || got[n+1].Recorded.Hour != 0.6 {
			t.Errorf("statuses after a move of 0.1: %+v", got[n:])
		}
	})
}

// Close may be called twice.
func TestCloseTwice(t *testing.T) {
	r := New(Config{Keys: testKeys, Coverage: &memCoverage{ratios: map[string]status.Completeness{}}})
	r.Close()
	r.Close()
}
