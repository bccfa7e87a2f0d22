package catalogue

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// Coverage windows and their upkeep.
const (
	// coverageKeep is how much of each camera's past Coverage keeps: a day,
	// and the hour the day's window may begin in.
	coverageKeep = 25 * time.Hour
	// coverageRecheck is how often the last coverageRecent of a camera
	// with a gap there is listed again (segments another node uploaded
	// late, recovered after a crash).
	coverageRecheck = 5 * time.Minute
	coverageRecent  = 2 * time.Hour
	// coverageMinWindow is the shortest window judged (a camera recording
	// for less is not given a share yet).
	coverageMinWindow = 10 * time.Second
)

// Coverage works out, for the cameras a node records, the share of their
// recent wall-clock time that stored segments cover (status.Completeness,
// docs/status.md). It loads a camera's last 25 hours from the catalogue
// when it first sees it, adds the segments the node stores, and lists the
// last two hours again every 5 minutes while they hold a gap. It is safe
// for concurrent use.
type Coverage struct {
	cat *Catalogue

	mu   sync.Mutex
	cams map[string]*camCoverage
}

type camCoverage struct {
	since   time.Time // when the node began tracking the camera
	spans   []Span    // covered, merged, in order
	loaded  bool      // the last 25 hours were listed
	checked time.Time // the last listing
}

// NewCoverage returns a Coverage over cat's recordings (and its clock).
func NewCoverage(cat *Catalogue) *Coverage {
	return &Coverage{cat: cat, cams: map[string]*camCoverage{}}
}

// Stored adds a segment the node stored.
func (c *Coverage) Stored(camera string, startMs, endMs int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc := c.cams[camera]; cc != nil {
		cc.spans = addSpan(cc.spans, Span{startMs, endMs})
	}
}

// Update tracks exactly the cameras given: new ones are loaded from
// storage, cameras with a recent gap are listed again when due, and the
// others are forgotten. It lists storage (a camera at a time) and returns
// the first listing error after trying them all.
func (c *Coverage) Update(ctx context.Context, cameras []string) error {
	now := c.cat.cfg.Now()
	var load []string
	c.mu.Lock()
	keep := map[string]bool{}
	for _, id := range cameras {
		keep[id] = true
		cc := c.cams[id]
		if cc == nil {
			cc = &camCoverage{since: now}
			c.cams[id] = cc
		}
		if !cc.loaded || now.Sub(cc.checked) >= coverageRecheck && hasGap(cc.spans, now.Add(-coverageRecent), now.Add(-c.lag())) {
			load = append(load, id)
		}
	}
	for id := range c.cams {
		if !keep[id] {
			delete(c.cams, id)
		}
	}
	c.mu.Unlock()
	var first error
	for _, id := range load {
		if err := c.load(ctx, id, now); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// load lists camera's last 25 hours (2 once loaded) into its spans.
func (c *Coverage) load(ctx context.Context, camera string, now time.Time) error {
	c.mu.Lock()
	cc := c.cams[camera]
	from := now.Add(-coverageKeep)
	if cc != nil && cc.loaded {
		from = now.Add(-coverageRecent)
	}
	c.mu.Unlock()
	if cc == nil {
		return nil
	}
	segs, err := c.cat.Segments(ctx, camera, from, now)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range segs {
		cc.spans = addSpan(cc.spans, Span{s.StartMs, s.EndMs()})
	}
	cc.loaded, cc.checked = true, now
	// Forget what no window reaches any more.
	cut := now.Add(-coverageKeep).UnixMilli()
	i := 0
	for i < len(cc.spans) && cc.spans[i].EndMs <= cut {
		i++
	}
	cc.spans = cc.spans[i:]
	return nil
}

// lag is how long after now a stretch without a stored segment may still
// be a segment being recorded and uploaded.
func (c *Coverage) lag() time.Duration { return c.cat.cfg.MaxSegment + 30*time.Second }

// Ratios returns camera's completeness over the last hour and day; ok is
// false until its history is loaded, or while its window is shorter than
// 10 seconds. The window ends at the later of its last stored segment's end and
// now minus the longest segment and 30 s, and begins an hour (a day)
// before, or at the camera's first known moment (its first segment within
// the window, or when tracking began) when later.
func (c *Coverage) Ratios(camera string) (status.Completeness, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc := c.cams[camera]
	if cc == nil || !cc.loaded {
		return status.Completeness{}, false
	}
	now := c.cat.cfg.Now()
	end := now.Add(-c.lag()).UnixMilli()
	first := cc.since.UnixMilli()
	if n := len(cc.spans); n > 0 {
		end = max(end, cc.spans[n-1].EndMs)
		first = min(first, cc.spans[0].StartMs)
	}
	ratio := func(w time.Duration) (float64, bool) {
		start := max(end-w.Milliseconds(), first)
		if end-start < coverageMinWindow.Milliseconds() {
			return 0, false
		}
		return float64(covered(cc.spans, start, end)) / float64(end-start), true
	}
	h, ok1 := ratio(time.Hour)
	d, ok2 := ratio(24 * time.Hour)
	return status.Completeness{Hour: h, Day: d}, ok1 && ok2
}

// addSpan merges s into the ordered, merged spans.
func addSpan(spans []Span, s Span) []Span {
	if s.EndMs <= s.StartMs {
		return spans
	}
	i, _ := slices.BinarySearchFunc(spans, s.StartMs, func(x Span, t int64) int {
		switch {
		case x.EndMs+storage.TouchToleranceMs < t:
			return -1
		case x.StartMs > t:
			return 1
		}
		return 0
	})
	j := i
	for j < len(spans) && spans[j].StartMs <= s.EndMs+storage.TouchToleranceMs {
		s.StartMs, s.EndMs = min(s.StartMs, spans[j].StartMs), max(s.EndMs, spans[j].EndMs)
		j++
	}
	return slices.Replace(spans, i, j, s)
}

// covered returns the time the spans cover within [from, to).
func covered(spans []Span, from, to int64) int64 {
	var n int64
	for _, s := range spans {
		if a, b := max(s.StartMs, from), min(s.EndMs, to); b > a {
			n += b - a
		}
	}
	return n
}

// hasGap reports whether the spans leave a gap within [from, to).
func hasGap(spans []Span, from, to time.Time) bool {
	f, t := from.UnixMilli(), to.UnixMilli()
	return t > f && covered(spans, f, t) < t-f
}
