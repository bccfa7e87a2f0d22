package recorder

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/storage"
)

// recordsTimeout bounds the registry read of Retention.Days.
const recordsTimeout = 2 * time.Second

// Retention is the one rule for the retention days (history_days) in
// effect for a camera, which its stored objects carry for lifecycle rules
// (docs/retention.md): the record this node records the camera with (its
// edits included), else the operator's configuration, else the registry;
// 0 when unknown (the sweeper still expires the camera's objects). A
// process without a recorder uses it too (the gap records of the API).
type Retention struct {
	// Static holds the history_days of the operator's configured
	// cameras, by id.
	Static map[string]int

	// Records, optional, reads the records of the other cameras.
	Records Records

	rec atomic.Pointer[Recorder] // the recorder using the rule, if any
}

// Days returns the history_days in effect for camera id.
func (t *Retention) Days(ctx context.Context, id string) int {
	if t == nil {
		return 0
	}
	if r := t.rec.Load(); r != nil {
		if c, ok := r.Camera(id); ok {
			return c.HistoryDays
		}
	}
	if d, ok := t.Static[id]; ok {
		return d
	}
	if t.Records == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, recordsTimeout)
	defer cancel()
	c, ok, err := t.Records.GetCamera(ctx, id)
	if err != nil || !ok {
		return 0
	}
	return c.HistoryDays
}

// Attrs returns the retention metadata and tag (storage.MetaRetentionDays,
// storage.TagRetentionDays) that camera id's stored objects carry, nil
// when its days are unknown.
func (t *Retention) Attrs(ctx context.Context, id string) (meta, tags map[string]string) {
	days := t.Days(ctx, id)
	if days <= 0 {
		return nil, nil
	}
	d := strconv.Itoa(days)
	return map[string]string{storage.MetaRetentionDays: d}, map[string]string{storage.TagRetentionDays: d}
}

// StaticCameras calls fn with the history_days of each camera that the
// sweeper of static cameras expires: the configured cameras, in id order,
// then the registry's cameras that are neither those nor API cameras
// (camera.IsAPIID), which are the static and synthetic cameras of other
// nodes. API cameras are the database's. The error is the registry's; the
// configured cameras are given all the same.
func (t *Retention) StaticCameras(ctx context.Context, fn func(id string, days int)) error {
	ids := slices.Sorted(maps.Keys(t.Static))
	for _, id := range ids {
		fn(id, t.Static[id])
	}
	if t.Records == nil {
		return nil
	}
	reg, err := t.Records.ListCameras(ctx)
	for _, c := range reg {
		if _, static := t.Static[c.ID]; !static && !camera.IsAPIID(c.ID) {
			fn(c.ID, c.HistoryDays)
		}
	}
	return err
}

// static returns the history_days of a configured camera, 0 if none.
func (t *Retention) static(id string) int {
	if t == nil {
		return 0
	}
	return t.Static[id]
}
