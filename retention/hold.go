package retention

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/vigia/vigia/storage"
)

// Hold is a legal hold: the recordings of Camera overlapping [FromMs, ToMs)
// are never deleted by the sweeper, neither by history_days nor by a quota.
type Hold struct {
	// Camera is the camera id.
	Camera string
	// FromMs and ToMs bound the held time, Unix milliseconds.
	FromMs, ToMs int64
}

// holdSet answers whether an object is held.
type holdSet map[string][]Hold

func newHoldSet(hs []Hold) holdSet {
	set := holdSet{}
	for _, h := range hs {
		set[h.Camera] = append(set[h.Camera], h)
	}
	return set
}

func (hs holdSet) covers(camera string, fromMs, toMs int64) bool {
	for _, h := range hs[camera] {
		if fromMs < h.ToMs && toMs > h.FromMs {
			return true
		}
	}
	return false
}

// heldKey reports whether key is a recording object (segment, gap record
// or hour manifest) a hold covers.
func (hs holdSet) heldKey(key string) bool {
	if len(hs) == 0 || !strings.HasPrefix(key, storage.PrefixRecordings) {
		return false
	}
	if e, err := storage.ParseRecordingKey(key); err == nil {
		end := e.StartMs + max(e.DurMs, 1)
		return hs.covers(e.Camera, e.StartMs, end)
	}
	// Any other object of an hour folder (the hour's manifest): held with
	// the hour. rec/{camera}/{YYYY}/{MM}/{DD}/{HH}/{name}
	parts := strings.Split(key, "/")
	if len(parts) != 7 {
		return false
	}
	t, err := time.Parse("2006/01/02/15", path.Join(parts[2:6]...))
	if err != nil {
		return false
	}
	return hs.covers(parts[1], t.UnixMilli(), t.Add(time.Hour).UnixMilli())
}

// loadHolds reads the holds for a sweep.
func (s *Sweeper) loadHolds(ctx context.Context) (holdSet, error) {
	if s.cfg.Holds == nil {
		return nil, nil
	}
	hs, err := s.cfg.Holds(ctx)
	if err != nil {
		return nil, fmt.Errorf("legal holds: %w", err)
	}
	return newHoldSet(hs), nil
}
