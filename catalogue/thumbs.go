package catalogue

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/storage"
)

// ThumbKind is a kind of stored thumbnail.
type ThumbKind int

// Kinds of thumbnails.
const (
	// MinuteThumbs are the minute thumbnails (storage.MinuteThumbKey),
	// in hour folders.
	MinuteThumbs ThumbKind = iota + 1
	// HourlyThumbs are the hourly thumbnails (storage.HourlyThumbKey), in
	// day folders.
	HourlyThumbs
)

// Thumb is one stored thumbnail.
type Thumb struct {
	// Key is the object key.
	Key string
	// TS is when it was taken, Unix seconds.
	TS int64
}

// maxThumbFolders bounds the folders one Thumbs call lists (a month of
// hour folders).
const maxThumbFolders = 31 * 24

// Thumbs returns camera's thumbnails of kind taken in [from, to), in time
// order, listing the folders the range touches (hours for minute
// thumbnails, UTC days for hourly ones) one after another. Keys that are
// not such a thumbnail's are skipped. A range of more than 744 folders, or
// outside the years 1970 to 9999, wraps ErrInvalidRange.
func (c *Catalogue) Thumbs(ctx context.Context, camera string, kind ThumbKind, from, to time.Time) ([]Thumb, error) {
	prefix, key, step := storage.MinuteThumbPrefix, storage.MinuteThumbKey, time.Hour
	first := from.UTC().Truncate(time.Hour)
	if kind == HourlyThumbs {
		prefix, key, step = storage.HourlyThumbPrefix, storage.HourlyThumbKey, 24*time.Hour
		first = time.Date(first.Year(), first.Month(), first.Day(), 0, 0, 0, 0, time.UTC)
	} else if kind != MinuteThumbs {
		return nil, fmt.Errorf("%w: thumbnail kind %d", ErrInvalidRange, kind)
	}
	if !to.After(from) || prefix(camera, from) == "" || prefix(camera, to.Add(-time.Millisecond)) == "" ||
		to.Sub(first) > maxThumbFolders*step {
		return nil, fmt.Errorf("%w: thumbnails of camera %q from %v to %v", ErrInvalidRange, camera, from, to)
	}
	fromMs, toMs := from.UnixMilli(), to.UnixMilli()
	var out []Thumb
	for f := first; f.Before(to); f = f.Add(step) {
		p := prefix(camera, f)
		for o, err := range storage.Walk(ctx, c.cfg.Store, p) {
			if err != nil {
				return nil, fmt.Errorf("list %s: %w", p, err)
			}
			sec, err := strconv.ParseInt(strings.TrimSuffix(path.Base(o.Key), ".jpg"), 10, 64)
			if err != nil || sec*1000 < fromMs || sec*1000 >= toMs || key(camera, time.Unix(sec, 0)) != o.Key {
				continue // out of the range, or not Vigia's
			}
			out = append(out, Thumb{Key: o.Key, TS: sec})
		}
	}
	slices.SortFunc(out, func(a, b Thumb) int { return cmp.Compare(a.TS, b.TS) })
	return out, nil
}
