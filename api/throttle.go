package api

import (
	"sync"
	"time"
)

// maxThrottleKeys bounds the memory of the throttle; past it, keys whose
// failures have all expired are dropped first, then the oldest.
const maxThrottleKeys = 100000

// throttle counts failed attempts per key in a sliding window.
type throttle struct {
	max    int
	window time.Duration

	mu    sync.Mutex
	fails map[string][]time.Time
}

func newThrottle(max int, window time.Duration) *throttle {
	return &throttle{max: max, window: window, fails: map[string][]time.Time{}}
}

// blocked reports whether key has used its attempts, and when the oldest
// counted failure leaves the window.
func (t *throttle) blocked(key string, now time.Time) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := t.recent(key, now)
	if len(f) < t.max {
		return false, 0
	}
	return true, f[0].Add(t.window).Sub(now)
}

// fail records a failed attempt of key.
func (t *throttle) fail(key string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.fails) >= maxThrottleKeys {
		t.prune(now)
	}
	t.fails[key] = append(t.recent(key, now), now)
}

// reset forgets key's failures (after a success).
func (t *throttle) reset(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.fails, key)
}

func (t *throttle) recent(key string, now time.Time) []time.Time {
	f := t.fails[key]
	i := 0
	for i < len(f) && now.Sub(f[i]) >= t.window {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(t.fails, key)
		return nil
	}
	t.fails[key] = f
	return f
}

func (t *throttle) prune(now time.Time) {
	for k := range t.fails {
		t.recent(k, now)
	}
	for k := range t.fails {
		if len(t.fails) < maxThrottleKeys {
			break
		}
		delete(t.fails, k)
	}
}
