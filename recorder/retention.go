package recorder

import (
	"context"
	"sync/atomic"
	"time"
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

// static returns the history_days of a configured camera, 0 if none.
func (t *Retention) static(id string) int {
	if t == nil {
		return 0
	}
	return t.Static[id]
}
