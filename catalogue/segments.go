package catalogue

import (
	"context"
	"fmt"
	"iter"
	"math"
	"time"
)

// Range yields, hour by hour, the segments and gap records of camera that
// overlap [from, to), each hour's in start order. Where stored segments
// overlap in time (two nodes recorded the camera), it yields one chain of
// them (chain); a segment decided only once the next hour is listed comes
// with that hour. A gap record is yielded when it starts before to and, if
// closed, ends after from. The listing starts MaxSegment before from. On
// an error it yields it once and stops.
func (c *Catalogue) Range(ctx context.Context, camera string, from, to time.Time) iter.Seq2[Hour, error] {
	return func(yield func(Hour, error) bool) {
		if err := checkRange(camera, from, to); err != nil {
			yield(Hour{}, err)
			return
		}
		f, t := from.UnixMilli(), to.UnixMilli()
		ch, last := newChain(), lastHour(to)
		for h, err := range c.Hours(ctx, camera, c.firstHour(from), last) {
			if err != nil {
				yield(Hour{}, err)
				return
			}
			out := Hour{Start: h.Start}
			horizon := h.Start.Add(time.Hour).UnixMilli()
			if !h.Start.Before(last) {
				horizon = math.MaxInt64
			}
			for _, s := range ch.next(h.Segments, horizon) {
				if s.EndMs() > f && s.StartMs < t {
					out.Segments = append(out.Segments, s)
				}
			}
			for _, g := range h.Gaps {
				if g.StartMs < t && (g.Open() || g.StartMs+g.DurMs > f) {
					out.Gaps = append(out.Gaps, g)
				}
			}
			if !yield(out, nil) {
				return
			}
		}
	}
}

// Segments returns camera's segments that overlap [from, to), in start
// order.
func (c *Catalogue) Segments(ctx context.Context, camera string, from, to time.Time) ([]Segment, error) {
	var out []Segment
	for h, err := range c.Range(ctx, camera, from, to) {
		if err != nil {
			return nil, err
		}
		out = append(out, h.Segments...)
	}
	return out, nil
}

// SegmentAt returns camera's segment that covers t: start ≤ t < end (the
// one that starts last, should two overlap). It wraps ErrNoRecording when
// none does.
func (c *Catalogue) SegmentAt(ctx context.Context, camera string, t time.Time) (Segment, error) {
	segs, err := c.Segments(ctx, camera, t, t.Add(time.Millisecond))
	if err != nil {
		return Segment{}, err
	}
	if len(segs) == 0 {
		return Segment{}, fmt.Errorf("camera %s at %s: %w", camera, t.UTC().Format(time.RFC3339Nano), ErrNoRecording)
	}
	return segs[len(segs)-1], nil
}

// Last describes the newest recording of a camera before a time.
type Last struct {
	// End is the end of the last segment; zero when none was found.
	End time.Time
	// GapAfter reports whether a gap record starts at or after End (or,
	// without a segment, at all): its cause is written down.
	GapAfter bool
}

// LastBefore looks back from t, hour by hour, at most within, for camera's
// last segment ending before t and the gap records after it. It stops at
// the newest hour holding anything.
func (c *Catalogue) LastBefore(ctx context.Context, camera string, t time.Time, within time.Duration) (Last, error) {
	var last Last
	if err := checkRange(camera, t.Add(-within), t); err != nil {
		return last, err
	}
	tm := t.UnixMilli()
	for h := t.UTC().Truncate(time.Hour); !h.Before(t.Add(-within).UTC().Truncate(time.Hour)); h = h.Add(-time.Hour) {
		hour, err := c.listHourStore(ctx, camera, h) // never a kept listing: recorders decide on it
		if err != nil {
			return last, err
		}
		var endMs int64
		for _, s := range hour.Segments {
			if s.EndMs() <= tm && s.EndMs() > endMs {
				endMs = s.EndMs()
			}
		}
		gaps := 0
		for _, g := range hour.Gaps {
			if g.StartMs < tm && g.StartMs >= endMs {
				gaps++
			}
		}
		if endMs > 0 {
			last.End = time.UnixMilli(endMs)
		}
		if gaps > 0 {
			last.GapAfter = true
		}
		if endMs > 0 || gaps > 0 {
			return last, nil
		}
	}
	return last, nil
}
