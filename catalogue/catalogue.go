package catalogue

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// Defaults of Config.
const (
	// DefaultInitCache is how many init sizes a Catalogue remembers.
	DefaultInitCache = 200_000
	// DefaultStatWorkers is how many Stat calls run at once for init sizes.
	DefaultStatWorkers = 16
	// DefaultListAhead is how many hour listings run at once.
	DefaultListAhead = 6
)

// Config configures a Catalogue.
type Config struct {
	// Store holds the recordings. Required.
	Store storage.Store

	// MaxSegment is the longest a stored segment can last:
	// storage.MaxSegmentDuration(recording.segment_duration). A range
	// is listed from MaxSegment before its start. It defaults to
	// storage.MaxSegmentDuration(60 s), 2 minutes.
	MaxSegment time.Duration

	// InitCache bounds the init sizes remembered. It defaults to 200,000
	// (about 25 MB).
	InitCache int

	// StatWorkers is how many Stat calls for init sizes run at once. It
	// defaults to 16.
	StatWorkers int

	// ListAhead is how many hour listings of one range run at once. It
	// defaults to 6.
	ListAhead int

	// HourCache, when positive, bounds the listings of past hours kept
	// (hourcache.go), in listings plus their segments and gap records;
	// 0 keeps none. Only readers that may see a listing HourCacheTTL old
	// should use a catalogue with it (WithHourCache).
	HourCache int
	// HourCacheTTL is how long a past hour's listing is used. It defaults
	// to DefaultHourCacheTTL.
	HourCacheTTL time.Duration

	// Now is the clock. It defaults to time.Now.
	Now func() time.Time
}

// Catalogue finds recordings in storage. It is safe for concurrent use;
// one per process is enough (its init size cache is shared).
type Catalogue struct {
	cfg   Config
	inits *initCache
	hours *hourCache // nil when off
}

// New returns a Catalogue.
func New(cfg Config) *Catalogue {
	if cfg.MaxSegment <= 0 {
		cfg.MaxSegment = storage.MaxSegmentDuration(0)
	}
	if cfg.InitCache <= 0 {
		cfg.InitCache = DefaultInitCache
	}
	if cfg.StatWorkers <= 0 {
		cfg.StatWorkers = DefaultStatWorkers
	}
	if cfg.ListAhead <= 0 {
		cfg.ListAhead = DefaultListAhead
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HourCacheTTL <= 0 {
		cfg.HourCacheTTL = DefaultHourCacheTTL
	}
	c := &Catalogue{cfg: cfg, inits: newInitCache(cfg.InitCache)}
	if cfg.HourCache > 0 {
		c.hours = newHourCache(cfg.HourCache, cfg.HourCacheTTL)
	}
	return c
}

// WithHourCache returns a catalogue on the same store, sharing c's init
// sizes, that keeps the listings of past hours (max as Config.HourCache,
// 0 meaning DefaultHourCache; ttl as Config.HourCacheTTL): for readers
// (timelines, playlists) that may see a listing ttl old, never for those
// that decide on it (holds, exports, a recorder's last segment).
func (c *Catalogue) WithHourCache(max int, ttl time.Duration) *Catalogue {
	if max <= 0 {
		max = DefaultHourCache
	}
	if ttl <= 0 {
		ttl = DefaultHourCacheTTL
	}
	cc := *c
	cc.cfg.HourCache, cc.cfg.HourCacheTTL = max, ttl
	cc.hours = newHourCache(max, ttl)
	return &cc
}

// Store returns the store the catalogue lists.
func (c *Catalogue) Store() storage.Store { return c.cfg.Store }

// MaxSegment returns the longest a stored segment can last.
func (c *Catalogue) MaxSegment() time.Duration { return c.cfg.MaxSegment }

// Segment is one stored recording segment.
type Segment struct {
	// Key is the object key.
	Key string
	// StartMs is the wall-clock start, Unix milliseconds; DurMs the
	// duration in milliseconds.
	StartMs, DurMs int64
	// Size is the object's size in bytes.
	Size int64
	// InitSize is the byte size of its init part (ftyp+moov): from the key
	// when it carries it ({startMs}_{durMs}_{initSize}.mp4), else filled by
	// InitSizes; 0 when unknown.
	InitSize int64
}

// EndMs returns the wall-clock end, Unix milliseconds.
func (s Segment) EndMs() int64 { return s.StartMs + s.DurMs }

// Start returns the wall-clock start.
func (s Segment) Start() time.Time { return time.UnixMilli(s.StartMs) }

// End returns the wall-clock end.
func (s Segment) End() time.Time { return time.UnixMilli(s.EndMs()) }

// Duration returns the duration.
func (s Segment) Duration() time.Duration { return time.Duration(s.DurMs) * time.Millisecond }

// GapRecord is one gap record as its key names it.
type GapRecord struct {
	// Key is the object key.
	Key string
	// StartMs is where the gap begins, Unix milliseconds; DurMs its length,
	// 0 while it was open when written.
	StartMs, DurMs int64
	// Cause says why.
	Cause status.Cause
}

// Open reports whether the record's end was not known when written.
func (g GapRecord) Open() bool { return g.DurMs == 0 }

// Hour is what one hour folder of a camera holds, in key order (start
// order).
type Hour struct {
	// Start is the hour's start (UTC).
	Start time.Time
	// Segments are its segments; Gaps its gap records.
	Segments []Segment
	Gaps     []GapRecord
}

// listHour lists the hour folder of camera holding t; a past hour's
// listing may come from the hour cache.
func (c *Catalogue) listHour(ctx context.Context, camera string, t time.Time) (Hour, error) {
	start := t.UTC().Truncate(time.Hour)
	now := c.cfg.Now()
	past := c.hours != nil && now.Sub(start.Add(time.Hour)) > c.cfg.MaxSegment+hourSettle
	k := hourKey{camera: camera, hour: start.Unix()}
	if past {
		if h, ok := c.hours.get(k, now); ok {
			return h, nil
		}
	}
	h, err := c.listHourStore(ctx, camera, t)
	if err == nil && past {
		c.hours.put(k, Hour{Start: h.Start, Segments: slices.Clone(h.Segments), Gaps: slices.Clone(h.Gaps)}, now)
	}
	return h, err
}

// listHourStore lists the hour folder of camera holding t from the store.
func (c *Catalogue) listHourStore(ctx context.Context, camera string, t time.Time) (Hour, error) {
	h := Hour{Start: t.UTC().Truncate(time.Hour)}
	prefix := storage.SegmentPrefix(camera, t)
	if prefix == "" {
		return h, fmt.Errorf("%w: camera %q at %v", ErrInvalidRange, camera, t)
	}
	for o, err := range storage.Walk(ctx, c.cfg.Store, prefix) {
		if err != nil {
			return h, fmt.Errorf("list %s: %w", prefix, err)
		}
		e, err := storage.ParseRecordingKey(o.Key)
		if err != nil || e.Camera != camera {
			continue // not Vigia's: ignored
		}
		switch e.Kind {
		case storage.KindSegment:
			if e.DurMs > 0 {
				s := Segment{Key: o.Key, StartMs: e.StartMs, DurMs: e.DurMs, Size: o.Size}
				if e.InitSize < o.Size {
					s.InitSize = e.InitSize
				}
				h.Segments = append(h.Segments, s)
			}
		case storage.KindGap:
			h.Gaps = append(h.Gaps, GapRecord{Key: o.Key, StartMs: e.StartMs, DurMs: e.DurMs, Cause: status.Cause(e.Cause)})
		}
	}
	return h, nil
}

// Hours yields the hour folders of camera from the one holding first to
// the one holding last, in time order, listing up to ListAhead of them at
// once. On an error it yields it once and stops.
func (c *Catalogue) Hours(ctx context.Context, camera string, first, last time.Time) iter.Seq2[Hour, error] {
	return func(yield func(Hour, error) bool) {
		first, last = first.UTC().Truncate(time.Hour), last.UTC().Truncate(time.Hour)
		if !storage.ValidCameraID(camera) || storage.SegmentPrefix(camera, first) == "" || storage.SegmentPrefix(camera, last) == "" {
			yield(Hour{}, fmt.Errorf("%w: camera %q from %v to %v", ErrInvalidRange, camera, first, last))
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		type result struct {
			h   Hour
			err error
		}
		// Each hour's listing runs in a goroutine of its own and delivers
		// to its own channel; at most ListAhead are under way, and each
		// exits once it has delivered (buffered) or ctx ends.
		var pending []chan result
		next := first
		start := func() {
			ch := make(chan result, 1)
			h := next
			go func() {
				hour, err := c.listHour(ctx, camera, h)
				ch <- result{hour, err}
			}()
			pending = append(pending, ch)
			next = next.Add(time.Hour)
		}
		for !next.After(last) && len(pending) < c.cfg.ListAhead {
			start()
		}
		for len(pending) > 0 {
			r := <-pending[0]
			pending = pending[1:]
			if r.err != nil {
				yield(Hour{}, r.err)
				return
			}
			if !next.After(last) {
				start()
			}
			if !yield(r.h, nil) {
				return
			}
		}
	}
}

// firstHour returns the hour from which a range starting at from is
// listed: a segment covering from started at most MaxSegment before it.
func (c *Catalogue) firstHour(from time.Time) time.Time {
	return from.Add(-c.cfg.MaxSegment).UTC().Truncate(time.Hour)
}

// lastHour returns the hour holding the last millisecond before to.
func lastHour(to time.Time) time.Time {
	return to.Add(-time.Millisecond).UTC().Truncate(time.Hour)
}

// checkRange validates camera and [from, to).
func checkRange(camera string, from, to time.Time) error {
	if !storage.ValidCameraID(camera) || !to.After(from) || storage.SegmentPrefix(camera, from) == "" || storage.SegmentPrefix(camera, to) == "" {
		return fmt.Errorf("%w: camera %q from %v to %v", ErrInvalidRange, camera, from, to)
	}
	return nil
}
