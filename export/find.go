package export

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/vigia/vigia/storage"
)

// lookback is how far before the range start segments are listed, to find
// the segment that holds the start (segments longer than this are not
// found when they start before it).
const lookback = time.Hour

// SegmentRef is one stored recording segment.
type SegmentRef struct {
	// Key is the object key.
	Key string
	// Start is the wall-clock start; Duration the media duration.
	Start    time.Time
	Duration time.Duration
	// Size is the object size in bytes.
	Size int64
}

// End returns the segment's wall-clock end.
func (s SegmentRef) End() time.Time { return s.Start.Add(s.Duration) }

// FindSegments lists the segments of camera that overlap [start, end), in
// time order, by listing one hour prefix at a time (from the hour before
// start to the hour holding end).
func FindSegments(ctx context.Context, st storage.Store, camera string, start, end time.Time) ([]SegmentRef, error) {
	var out []SegmentRef
	for h := start.Add(-lookback).UTC().Truncate(time.Hour); h.Before(end); h = h.Add(time.Hour) {
		prefix := storage.SegmentPrefix(camera, h)
		if prefix == "" {
			return nil, fmt.Errorf("%w: camera %q or time %v", ErrRange, camera, h)
		}
		for o, err := range storage.Walk(ctx, st, prefix) {
			if err != nil {
				return nil, fmt.Errorf("list %s: %w", prefix, err)
			}
			_, startMs, durMs, err := storage.ParseSegmentKey(o.Key)
			if err != nil || durMs <= 0 {
				continue
			}
			s := SegmentRef{Key: o.Key, Start: time.UnixMilli(startMs), Duration: time.Duration(durMs) * time.Millisecond, Size: o.Size}
			if s.Start.Before(end) && s.End().After(start) {
				out = append(out, s)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out, nil
}
