package api

import (
	"sync"
	"time"
)

// maxThrottleKeys bounds the memory of the throttle; past it, keys whose
// attempts have all expired are dropped first, then any.
const maxThrottleKeys = 100000

// limit is a throttle key and the attempts it is allowed in the window.
type limit struct {
	key string
	max int
}

// throttle counts attempts per key in a sliding window. An attempt is
// counted when it starts (reserve), before its outcome is known, so
// attempts running in parallel are all counted; a successful one is
// uncounted afterwards (release).
type throttle struct {
	window time.Duration

	mu   sync.Mutex
	hits map[string][]time.Time
}

func newThrottle(window time.Duration) *throttle {
	return &throttle{window: window, hits: map[string][]time.Time{}}
}

// reserve counts an attempt at now on every limit, in one step, unless one
// of them has used its attempts: then nothing is counted, ok is false and
// wait is how long until every exhausted limit has room again.
func (t *throttle) reserve(limits []limit, now time.Time) (ok bool, wait time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, l := range limits {
		if h := t.recent(l.key, now); len(h) >= l.max {
			// A place frees when the attempt max places back from
			// the newest leaves the window.
			free := h[len(h)-l.max].Add(t.window).Sub(now)
			wait = max(wait, free)
		}
	}
	if wait > 0 {
		return false, wait
	}
	if len(t.hits)+len(limits) > maxThrottleKeys {
		t.prune(now)
	}
	for _, l := range limits {
		t.hits[l.key] = append(t.recent(l.key, now), now)
	}
	return true, 0
}

// release uncounts the attempt reserved at at on key (it succeeded).
func (t *throttle) release(key string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.hits[key]
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Equal(at) {
			t.hits[key] = append(h[:i:i], h[i+1:]...)
			break
		}
	}
	if len(t.hits[key]) == 0 {
		delete(t.hits, key)
	}
}

// reset forgets every attempt of key.
func (t *throttle) reset(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.hits, key)
}

// recent drops key's attempts that left the window and returns the rest,
// oldest first.
func (t *throttle) recent(key string, now time.Time) []time.Time {
	h := t.hits[key]
	i := 0
	for i < len(h) && now.Sub(h[i]) >= t.window {
		i++
	}
	h = h[i:]
	if len(h) == 0 {
		delete(t.hits, key)
		return nil
	}
	t.hits[key] = h
	return h
}

func (t *throttle) prune(now time.Time) {
	for k := range t.hits {
		t.recent(k, now)
	}
	for k := range t.hits {
		if len(t.hits) < maxThrottleKeys/2 {
			break
		}
		delete(t.hits, k)
	}
}
