package retention

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/vigia/vigia/storage"
)

// Defaults of EventKeep.
const (
	// DefaultPreRoll is how much video before an event is kept with it.
	DefaultPreRoll = 30 * time.Second
	// DefaultPostRoll is how much video after an event's start is kept
	// with it (motion events last up to 60 s).
	DefaultPostRoll = 90 * time.Second
)

// EventKeep keeps a camera's recordings around its events for longer than
// its history_days (docs/retention.md, "Video kept around events").
type EventKeep struct {
	// Days is how long the recordings around events are kept. When it is
	// not more than the camera's Days, nothing is kept longer.
	Days int
	// PreRoll and PostRoll widen each event into the span kept: from
	// PreRoll before its time to PostRoll after it. They default to
	// DefaultPreRoll and DefaultPostRoll.
	PreRoll, PostRoll time.Duration
	// Events returns the times of the camera's events in [from, to).
	// Without it nothing is kept longer.
	Events func(ctx context.Context, from, to time.Time) ([]time.Time, error)
}

// Span is a time span [Start, End).
type Span struct {
	Start, End time.Time
}

// on reports whether k applies to a camera keeping days days.
func (k EventKeep) on(days int) bool {
	return k.Events != nil && k.Days > days
}

func (k EventKeep) rolls() (pre, post time.Duration) {
	pre, post = k.PreRoll, k.PostRoll
	if pre <= 0 {
		pre = DefaultPreRoll
	}
	if post <= 0 {
		post = DefaultPostRoll
	}
	return pre, post
}

// KeptSpans returns the spans of video k keeps around the events in
// [from, to): each event widened by the pre- and post-roll, overlapping
// spans merged, in time order.
func (k EventKeep) KeptSpans(ctx context.Context, from, to time.Time) ([]Span, error) {
	if k.Events == nil {
		return nil, nil
	}
	pre, post := k.rolls()
	times, err := k.Events(ctx, from.Add(-post), to.Add(pre))
	if err != nil {
		return nil, err
	}
	spans := make([]Span, 0, len(times))
	for _, t := range times {
		spans = append(spans, Span{Start: t.Add(-pre), End: t.Add(post)})
	}
	slices.SortFunc(spans, func(a, b Span) int { return a.Start.Compare(b.Start) })
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && !s.Start.After(out[n-1].End) {
			if s.End.After(out[n-1].End) {
				out[n-1].End = s.End
			}
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

// overlaps reports whether [start, end) overlaps one of the sorted spans.
func overlaps(spans []Span, start, end time.Time) bool {
	i, _ := slices.BinarySearchFunc(spans, start, func(s Span, t time.Time) int {
		if !s.End.After(t) {
			return -1
		}
		return 1
	})
	return i < len(spans) && spans[i].Start.Before(end)
}

// keepAroundEvents applies c.Keep to c's recordings: those that ended
// before cutoff (history_days) and after the keep's own cutoff are deleted
// one by one unless they overlap a kept span. It returns the cutoff of the
// recordings walk: the keep's when it applies, else cutoff.
func (d *deleter) keepAroundEvents(ctx context.Context, c CameraRetention, now, cutoff time.Time) (time.Time, error) {
	if !c.Keep.on(c.Days) {
		return cutoff, nil
	}
	keepCutoff := Cutoff(now, c.Keep.Days)
	spans, err := c.Keep.KeptSpans(ctx, keepCutoff, cutoff)
	if err != nil {
		return cutoff, fmt.Errorf("events of camera %s: %w", c.Camera, err)
	}
	for day := keepCutoff.UTC().Truncate(24 * time.Hour); day.Before(cutoff); day = day.Add(24 * time.Hour) {
		prefix := storage.CameraSegmentsPrefix(c.Camera) + day.Format("2006/01/02") + "/"
		for o, err := range storage.Walk(ctx, d.s, prefix) {
			if err != nil {
				return cutoff, fmt.Errorf("list %s: %w", prefix, err)
			}
			e, err := storage.ParseRecordingKey(o.Key)
			if err != nil {
				continue
			}
			start := time.UnixMilli(e.StartMs)
			end := start.Add(time.Duration(e.DurMs) * time.Millisecond)
			if e.DurMs == 0 || !Expired(start, cutoff) || overlaps(spans, start, end) {
				continue // open gap, still within history_days, or kept
			}
			if err := d.add(ctx, o.Key); err != nil {
				return cutoff, err
			}
		}
	}
	return keepCutoff, d.flush(ctx)
}
