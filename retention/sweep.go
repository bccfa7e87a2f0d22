package retention

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/storage"
)

// deleteBatch is the number of keys per Delete call.
const deleteBatch = 1000

// snapDigits is the length of a Unix-ms snapshot name between 2001 and 2286,
// where lexical order is time order.
const snapDigits = 13

// sweepCamera deletes c's expired objects under every camera prefix, oldest
// first, in a fixed order, so a sweep cut short is finished by the next.
func (s *Sweeper) sweepCamera(ctx context.Context, c CameraRetention, r *Report) error {
	if c.Days <= 0 || !storage.ValidCameraID(c.Camera) {
		return nil
	}
	r.Cameras++
	cutoff := Cutoff(s.cfg.Now(), c.Days)
	d := &deleter{s: s.cfg.Store, r: r, held: s.held}
	recCutoff, err := d.keepAroundEvents(ctx, c, s.cfg.Now(), cutoff)
	if err != nil {
		return err
	}
	for _, dated := range []struct {
		prefix string
		leaf   level
		cutoff time.Time
	}{
		{storage.PrefixRecordings, levelHour, recCutoff},
		{storage.PrefixThumbs, levelHour, cutoff},
		{storage.PrefixHourlyThumbs, levelDay, cutoff},
	} {
		if err := d.dated(ctx, dated.prefix+c.Camera+"/", levelYear, dated.leaf, time.Time{}, dated.cutoff); err != nil {
			return err
		}
	}
	if err := d.snapshots(ctx, storage.PrefixSnapshots+c.Camera+"/", cutoff); err != nil {
		return err
	}
	if err := d.byModified(ctx, storage.PrefixEvents+c.Camera+"/", recCutoff); err != nil {
		return err
	}
	return d.flush(ctx)
}

// deleter batches deletions.
type deleter struct {
	s    storage.Store
	r    *Report
	held func(key string) bool // legal holds; nil: none
	keys []string
}

func (d *deleter) add(ctx context.Context, key string) error {
	if d.held != nil && d.held(key) {
		d.r.Held++
		return nil
	}
	d.keys = append(d.keys, key)
	if len(d.keys) >= deleteBatch {
		return d.flush(ctx)
	}
	return nil
}

func (d *deleter) flush(ctx context.Context) error {
	if len(d.keys) == 0 {
		return nil
	}
	if err := d.s.Delete(ctx, d.keys); err != nil {
		return fmt.Errorf("delete %d objects from %s: %w", len(d.keys), d.keys[0], err)
	}
	d.r.Objects += len(d.keys)
	d.keys = d.keys[:0]
	return nil
}

// dated walks the folders of prefix at level l (one listing per level,
// with delimiter "/"), deleting whole folders that ended before cutoff and
// descending only into the folder that holds cutoff. At the leaf level of
// day folders (hourly thumbnails), objects are judged one by one.
func (d *deleter) dated(ctx context.Context, prefix string, l, leaf level, parent, cutoff time.Time) error {
	for page, err := range storage.Pages(ctx, d.s, prefix, storage.ListOptions{Delimiter: "/"}) {
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		if l > leaf {
			// Inside a leaf folder: the objects themselves.
			for _, o := range page.Objects {
				if t, ok := unixSecName(o.Key); ok && Expired(t, cutoff) {
					if err := d.add(ctx, o.Key); err != nil {
						return err
					}
				}
			}
		}
		for _, p := range page.CommonPrefixes {
			name := strings.TrimSuffix(strings.TrimPrefix(p, prefix), "/")
			if l > leaf {
				continue
			}
			from, to, ok := span(l, parent, name)
			if !ok {
				continue
			}
			switch {
			case !to.After(cutoff):
				if err := d.all(ctx, p); err != nil {
					return err
				}
				d.r.Prefixes++
			case from.Before(cutoff) && (l < leaf || leaf == levelDay):
				// The folder holding the cutoff: descend (into the
				// objects themselves for day-level leaves; an hour leaf
				// holding the cutoff is kept whole).
				if err := d.dated(ctx, p, l+1, leaf, from, cutoff); err != nil {
					return err
				}
			default:
				// Folders sort in time order: the rest are newer.
				return nil
			}
		}
	}
	return nil
}

// all deletes every object below prefix.
func (d *deleter) all(ctx context.Context, prefix string) error {
	for o, err := range storage.Walk(ctx, d.s, prefix) {
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		if err := d.add(ctx, o.Key); err != nil {
			return err
		}
	}
	return d.flush(ctx)
}

// snapshots deletes expired snapshots {unixMs}.jpg below prefix, stopping at
// the first kept one of canonical length (later keys are newer).
func (d *deleter) snapshots(ctx context.Context, prefix string, cutoff time.Time) error {
	for o, err := range storage.Walk(ctx, d.s, prefix) {
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		name := strings.TrimSuffix(path.Base(o.Key), path.Ext(o.Key))
		ms, err := strconv.ParseInt(name, 10, 64)
		if err != nil || strings.Contains(strings.TrimPrefix(o.Key, prefix), "/") {
			continue
		}
		if Expired(time.UnixMilli(ms), cutoff) {
			if err := d.add(ctx, o.Key); err != nil {
				return err
			}
			continue
		}
		if len(name) == snapDigits {
			return nil
		}
	}
	return nil
}

// byModified deletes the objects below prefix written before cutoff (event
// images, whose names carry no time).
func (d *deleter) byModified(ctx context.Context, prefix string, cutoff time.Time) error {
	for o, err := range storage.Walk(ctx, d.s, prefix) {
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		if !o.Modified.IsZero() && Expired(o.Modified, cutoff) {
			if err := d.add(ctx, o.Key); err != nil {
				return err
			}
		}
	}
	return nil
}

// unixSecName parses a {unixSec}.jpg object name.
func unixSecName(key string) (time.Time, bool) {
	name := strings.TrimSuffix(path.Base(key), path.Ext(key))
	sec, err := strconv.ParseInt(name, 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, false
	}
	return time.Unix(sec, 0), true
}
