package catalogue

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestHourCache: a timeline's past hours are listed once and then read
// from the cache until its TTL; the hours still recorded into are listed
// every time; a catalogue without the cache (holds, exports, recorders)
// lists every time; the cache holds no more than its bound.
func TestHourCache(t *testing.T) {
	ctx := context.Background()
	cs := &countingStore{Store: memStore(t)}
	var mu sync.Mutex
	now := at(23, 30, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	for h := 0; h < 23; h++ {
		putSegment(t, cs, "cam", at(h, 10, 0), time.Minute, 100)
	}
	plain := New(Config{Store: cs, Now: clock})
	cached := plain.WithHourCache(0, time.Minute)
	from, to := at(0, 0, 0), at(23, 30, 0)
	lists := func(c *Catalogue) int64 {
		before := cs.lists.Load()
		tl, err := c.Timeline(ctx, "cam", from, to, TimelineOptions{})
		if err != nil || len(tl.Recorded) == 0 {
			t.Fatalf("timeline: %+v %v", tl, err)
		}
		return cs.lists.Load() - before
	}
	first := lists(cached)
	second := lists(cached)
	t.Logf("LIST calls of a 23.5-hour timeline: %d, then %d with its past hours kept", first, second)
	if first < 23 || second > 2 {
		t.Fatalf("LIST calls %d then %d: want every hour, then only the hours still recorded into", first, second)
	}
	if n := lists(plain); n < 23 {
		t.Fatalf("a catalogue without the cache listed %d hours", n)
	}
	// A segment uploaded late into a past hour shows once the TTL passed.
	putSegment(t, cs, "cam", at(5, 30, 0), time.Minute, 100)
	mu.Lock()
	now = now.Add(time.Minute + time.Second)
	mu.Unlock()
	if n := lists(cached); n < 23 {
		t.Fatalf("after the TTL %d LIST calls, want every hour again", n)
	}
	segs, err := cached.Segments(ctx, "cam", at(5, 0, 0), at(6, 0, 0))
	if err != nil || len(segs) != 2 {
		t.Fatalf("the late segment: %d segments, %v", len(segs), err)
	}
	// The bound: a cache of 10 holds about 5 one-segment hours.
	small := plain.WithHourCache(10, time.Hour)
	lists(small)
	if st := small.HourCacheStats(); st.Held > 10 || st.Held == 0 {
		t.Fatalf("a cache bounded to 10 holds %d", st.Held)
	}
}
