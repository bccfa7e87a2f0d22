package export

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vigia/vigia/catalogue"
)

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
// time order, through the catalogue.
func FindSegments(ctx context.Context, cat *catalogue.Catalogue, camera string, start, end time.Time) ([]SegmentRef, error) {
	segs, err := cat.Segments(ctx, camera, start, end)
	if errors.Is(err, catalogue.ErrInvalidRange) {
		return nil, fmt.Errorf("%w: %w", ErrRange, err)
	}
	if err != nil {
		return nil, err
	}
	out := make([]SegmentRef, len(segs))
	for i, s := range segs {
		out[i] = SegmentRef{Key: s.Key, Start: s.Start(), Duration: s.Duration(), Size: s.Size}
	}
	return out, nil
}
