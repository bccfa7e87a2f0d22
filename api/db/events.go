package db

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Event is a row of events.
type Event struct {
	ID                int64
	UID               string // producer's event id, unique
	CameraID          int64
	ClientID          int64
	Type              int
	At                time.Time
	ImageKey          string
	CameraDescription string // filled by Events while the camera is the event's client's
}

// AddEvent stores e once: a second event with the same UID is ignored and
// reported with added false.
func (d *DB) AddEvent(ctx context.Context, e Event, now time.Time) (added bool, err error) {
	res, err := d.exec(ctx, `INSERT INTO events (event_uid, camera_id, client_id, event_type, event_at, image_key, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_uid) DO NOTHING`,
		e.UID, e.CameraID, e.ClientID, e.Type, e.At.UnixMilli(), e.ImageKey, now.UnixMilli())
	if err != nil {
		return false, fmt.Errorf("add event %s: %w", e.UID, err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// EventFilter selects events.
type EventFilter struct {
	ClientID int64 // 0: every client
	CameraID int64 // 0: every camera
	Types    []int // empty: every type
	From, To time.Time
	Limit    int
	Offset   int
}

// Events returns one page of the events matching f, newest first, with
// the total count.
func (d *DB) Events(ctx context.Context, f EventFilter) ([]Event, int, error) {
	conds := []string{"e.event_at >= ?", "e.event_at < ?"}
	args := []any{f.From.UnixMilli(), f.To.UnixMilli()}
	if f.ClientID != 0 {
		conds, args = append(conds, "e.client_id = ?"), append(args, f.ClientID)
	}
	if f.CameraID != 0 {
		conds, args = append(conds, "e.camera_id = ?"), append(args, f.CameraID)
	}
	if len(f.Types) > 0 {
		conds = append(conds, "e.event_type IN ("+strings.TrimSuffix(strings.Repeat("?, ", len(f.Types)), ", ")+")")
		for _, t := range f.Types {
			args = append(args, t)
		}
	}
	where := " WHERE " + strings.Join(conds, " AND ")
	var total int
	if err := d.queryRow(ctx, `SELECT COUNT(*) FROM events e`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count events: %w", classify(err))
	}
	rows, err := d.query(ctx, `SELECT e.id, e.event_uid, e.camera_id, e.client_id, e.event_type, e.event_at, e.image_key,
		COALESCE(c.description, '') FROM events e LEFT JOIN cameras c ON c.id = e.camera_id AND c.client_id = e.client_id`+where+
		` ORDER BY e.event_at DESC, e.id DESC LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var at int64
		if err := rows.Scan(&e.ID, &e.UID, &e.CameraID, &e.ClientID, &e.Type, &at, &e.ImageKey, &e.CameraDescription); err != nil {
			return nil, 0, err
		}
		e.At = time.UnixMilli(at)
		out = append(out, e)
	}
	return out, total, classify(rows.Err())
}
