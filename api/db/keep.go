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

// SetEventKeepDays sets how many days camera keeps the video around its
// events; 0 leaves it to the configuration.
func (d *DB) SetEventKeepDays(ctx context.Context, camera int64, days int) error {
	_, err := d.exec(ctx, `INSERT INTO camera_event_keep (camera_id, days) VALUES (?, ?)
		ON CONFLICT (camera_id) DO UPDATE SET days = excluded.days`, camera, days)
	if err != nil {
		return fmt.Errorf("event keep of camera %d: %w", camera, err)
	}
	return nil
}

// EventKeepDays returns the days set by SetEventKeepDays, by camera id.
func (d *DB) EventKeepDays(ctx context.Context) (map[int64]int, error) {
	rows, err := d.query(ctx, `SELECT camera_id, days FROM camera_event_keep`)
	if err != nil {
		return nil, fmt.Errorf("event keep days: %w", err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id int64
		var days int
		if err := rows.Scan(&id, &days); err != nil {
			return nil, err
		}
		out[id] = days
	}
	return out, classify(rows.Err())
}
