package api

import (
	"net/netip"
	"strings"
	"sync"
	"time"
)

// maxThrottleKeys bounds the memory of the throttle; past it, keys whose
// attempts have all expired are dropped first, then address keys with
// attempts left, then any other key with attempts left. A key that has
// used its attempts (a lockout) is never dropped before its attempts
// leave the window: flooding the throttle with new keys must not lift an
// account's lockout. Lockouts alone may hold up to maxThrottleLocked
// keys; past that every new attempt is refused until some expire.
const (
	maxThrottleKeys   = 100000
	maxThrottleLocked = 4 * maxThrottleKeys
)

// addrKeyPrefix starts the throttle key of a client address.
const addrKeyPrefix = "addr:"

// addrThrottleKey is the throttle key of client address a: the address
// itself for IPv4, its /64 for IPv6, the smallest block a host is given
// (a client holds every address of its /64 and could take a fresh one for
// each attempt).
func addrThrottleKey(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return addrKeyPrefix + p.String()
	}
	return addrKeyPrefix + a.String()
}

// limit is a throttle key and the attempts it is allowed in the window.
type limit struct {
	key string
	max int
}

// attempts are a key's attempts in the window, oldest first, and the
// most it is allowed (the largest asked of it).
type attempts struct {
	at  []time.Time
	max int
}

// throttle counts attempts per key in a sliding window. An attempt is
// counted when it starts (reserve), before its outcome is known, so
// attempts running in parallel are all counted; a successful one is
// uncounted afterwards (release).
type throttle struct {
	window time.Duration

	mu   sync.Mutex
	hits map[string]*attempts
}

func newThrottle(window time.Duration) *throttle {
	return &throttle{window: window, hits: map[string]*attempts{}}
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
		if len(t.hits)+len(limits) > maxThrottleLocked {
			return false, t.window
		}
	}
	for _, l := range limits {
		a := t.hits[l.key]
		if a == nil {
			a = &attempts{}
			t.hits[l.key] = a
		}
		a.at = append(a.at, now)
		a.max = max(a.max, l.max)
	}
	return true, 0
}

// release uncounts the attempt reserved at at on key (it succeeded).
func (t *throttle) release(key string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.hits[key]
	if a == nil {
		return
	}
	h := a.at
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Equal(at) {
			a.at = append(h[:i:i], h[i+1:]...)
			break
		}
	}
	if len(a.at) == 0 {
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
	a := t.hits[key]
	if a == nil {
		return nil
	}
	h := a.at
	i := 0
	for i < len(h) && now.Sub(h[i]) >= t.window {
		i++
	}
	h = h[i:]
	if len(h) == 0 {
		delete(t.hits, key)
		return nil
	}
	a.at = h
	return h
}

// prune brings the keys under half of maxThrottleKeys if it can (see
// maxThrottleKeys for the order), keeping every lockout.
func (t *throttle) prune(now time.Time) {
	for k := range t.hits {
		t.recent(k, now)
	}
	for _, addr := range []bool{true, false} {
		for k, a := range t.hits {
			if len(t.hits) < maxThrottleKeys/2 {
				return
			}
			if strings.HasPrefix(k, addrKeyPrefix) == addr && len(a.at) < a.max {
				delete(t.hits, k)
			}
		}
	}
}
