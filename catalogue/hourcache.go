package catalogue

import (
	"container/list"
	"slices"
	"sync"
	"time"
)

// Hour listings of past hours are kept (Config.HourCache, WithHourCache): a past hour
// changes only when retention or a quota deletes from it, or when a
// segment held back by a storage outage is uploaded late, so a listing
// kept for HourCacheTTL is at most that old. Hours that may still be
// recorded into (those ending less than MaxSegment plus hourSettle ago)
// are always listed.
const (
	// DefaultHourCache bounds the segments and gap records kept, about
	// 25 MB.
	DefaultHourCache = 200_000
	// DefaultHourCacheTTL is how long a past hour's listing is used.
	DefaultHourCacheTTL = 5 * time.Minute
	// hourSettle is added to MaxSegment before an hour counts as past.
	hourSettle = 2 * time.Minute
)

// hourKey names one camera hour.
type hourKey struct {
	camera string
	hour   int64 // Unix seconds of its start
}

// hourEntry is a kept listing.
type hourEntry struct {
	key   hourKey
	hour  Hour
	until time.Time
	cost  int
}

// hourCache is a least recently used set of hour listings whose total
// cost (one per listing, plus its segments and gap records) stays within
// max.
type hourCache struct {
	max int
	ttl time.Duration

	mu    sync.Mutex
	cost  int
	order *list.List // of *hourEntry, most recently used first
	byKey map[hourKey]*list.Element
	hits  uint64
	miss  uint64
}

func newHourCache(max int, ttl time.Duration) *hourCache {
	return &hourCache{max: max, ttl: ttl, order: list.New(), byKey: map[hourKey]*list.Element{}}
}

// get returns a copy of the kept listing of k, if fresh at now.
func (c *hourCache) get(k hourKey, now time.Time) (Hour, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[k]
	if !ok {
		c.miss++
		return Hour{}, false
	}
	e := el.Value.(*hourEntry)
	if !now.Before(e.until) {
		c.remove(el)
		c.miss++
		return Hour{}, false
	}
	c.order.MoveToFront(el)
	c.hits++
	return Hour{Start: e.hour.Start, Segments: slices.Clone(e.hour.Segments), Gaps: slices.Clone(e.hour.Gaps)}, true
}

// put keeps h as the listing of k from now, evicting the least recently
// used listings past max. A listing larger than max is not kept.
func (c *hourCache) put(k hourKey, h Hour, now time.Time) {
	cost := 1 + len(h.Segments) + len(h.Gaps)
	if cost > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[k]; ok {
		c.remove(el)
	}
	e := &hourEntry{key: k, hour: h, until: now.Add(c.ttl), cost: cost}
	c.byKey[k] = c.order.PushFront(e)
	c.cost += cost
	for c.cost > c.max {
		c.remove(c.order.Back())
	}
}

func (c *hourCache) remove(el *list.Element) {
	e := el.Value.(*hourEntry)
	c.order.Remove(el)
	delete(c.byKey, e.key)
	c.cost -= e.cost
}

// HourCacheStats are the counts of the hour listing cache.
type HourCacheStats struct {
	// Hits and Misses count the lookups of past hours.
	Hits, Misses uint64
	// Held is the cost held: listings plus their segments and gap records.
	Held int
}

// HourCacheStats returns the counts of the hour listing cache (zero when
// it is off).
func (c *Catalogue) HourCacheStats() HourCacheStats {
	if c.hours == nil {
		return HourCacheStats{}
	}
	c.hours.mu.Lock()
	defer c.hours.mu.Unlock()
	return HourCacheStats{Hits: c.hours.hits, Misses: c.hours.miss, Held: c.hours.cost}
}
