package db

import (
	"context"
	"fmt"
	"time"
)

// EventTimes returns the times of camera's events in [from, to), oldest
// first (the spans retention keeps around events).
func (d *DB) EventTimes(ctx context.Context, camera int64, from, to time.Time) ([]time.Time, error) {
	rows, err := d.query(ctx, `SELECT event_at FROM events WHERE camera_id = ? AND event_at >= ? AND event_at < ? ORDER BY event_at`,
		camera, from.UnixMilli(), to.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("event times of camera %d: %w", camera, err)
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var ms int64
		if err := rows.Scan(&ms); err != nil {
			return nil, err
		}
		out = append(out, time.UnixMilli(ms))
	}
	return out, classify(rows.Err())
}
