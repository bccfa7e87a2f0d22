package catalogue

import (
	"context"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/storage"
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

// LastBefore looks back from t, at most within, for camera's last segment
// ending before t and the gap records after it. It stops at the newest
// hour holding anything. It lists t's hour first (a camera recording now
// has its last segment there), then, for each day back, the day's hour
// folders (one listing with a delimiter) and only the hours present: a
// node starting hundreds of cameras that recorded nothing lately makes a
// few listings each, not one for every hour of within.
func (c *Catalogue) LastBefore(ctx context.Context, camera string, t time.Time, within time.Duration) (Last, error) {
	if err := checkRange(camera, t.Add(-within), t); err != nil {
		return Last{}, err
	}
	from := t.Add(-within).UTC().Truncate(time.Hour)
	newest := t.UTC().Truncate(time.Hour)
	if last, found, err := c.lastInHour(ctx, camera, newest, t); found || err != nil {
		return last, err
	}
	for day := truncateDay(newest); !day.Before(truncateDay(from)); day = day.AddDate(0, 0, -1) {
		hours, err := c.hoursOfDay(ctx, camera, day)
		if err != nil {
			return Last{}, err
		}
		for _, h := range slices.Backward(hours) {
			if !h.Before(newest) || h.Before(from) {
				continue
			}
			if last, found, err := c.lastInHour(ctx, camera, h, t); found || err != nil {
				return last, err
			}
		}
	}
	return Last{}, nil
}

// lastInHour reads camera's hour h for LastBefore(t): found when the hour
// holds a segment ending by t or a gap record starting before t and not
// before that segment's end.
func (c *Catalogue) lastInHour(ctx context.Context, camera string, h, t time.Time) (last Last, found bool, err error) {
	hour, err := c.listHourStore(ctx, camera, h) // never a kept listing: recorders decide on it
	if err != nil {
		return last, false, err
	}
	tm := t.UnixMilli()
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
	last.GapAfter = gaps > 0
	return last, endMs > 0 || gaps > 0, nil
}

// hoursOfDay returns the hours of UTC day whose folders hold something of
// camera, in time order.
func (c *Catalogue) hoursOfDay(ctx context.Context, camera string, day time.Time) ([]time.Time, error) {
	hourPrefix := storage.SegmentPrefix(camera, day)
	dayPrefix := hourPrefix[:len(hourPrefix)-len("HH/")]
	var hours []time.Time
	for page, err := range storage.Pages(ctx, c.cfg.Store, dayPrefix, storage.ListOptions{Delimiter: "/"}) {
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", dayPrefix, err)
		}
		for _, p := range page.CommonPrefixes {
			hh, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p, dayPrefix), "/"))
			if err != nil || hh < 0 || hh > 23 {
				continue // not an hour folder of Vigia's
			}
			hours = append(hours, day.Add(time.Duration(hh)*time.Hour))
		}
	}
	slices.SortFunc(hours, func(a, b time.Time) int { return a.Compare(b) })
	return hours, nil
}

// truncateDay returns the start of t's UTC day.
func truncateDay(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}
