package db

import (
	"context"
	"fmt"
	"time"
)

// Hold is a row of holds: a legal hold on a camera's time range (CameraID,
// StartMs, EndMs) or on a downloadable video (VideoID), with its audit.
type Hold struct {
	ID       int64
	CameraID int64
	VideoID  int64
	StartMs  int64
	EndMs    int64
	// Reason, PlacedBy and PlacedAt say why, who and when it was placed.
	Reason   string
	PlacedBy string
	PlacedAt time.Time
	// LiftedBy, LiftedAt and LiftReason say who lifted it, when and why;
	// LiftedAt is zero while it is in force.
	LiftedBy   string
	LiftedAt   time.Time
	LiftReason string
}

// Active reports whether the hold is in force.
func (h Hold) Active() bool { return h.LiftedAt.IsZero() }

const holdCols = `id, camera_id, video_id, start_ms, end_ms, reason, placed_by, placed_at, lifted_by, lifted_at, lift_reason`

func scanHold(sc interface{ Scan(...any) error }) (Hold, error) {
	var h Hold
	var pa, la int64
	err := sc.Scan(&h.ID, &h.CameraID, &h.VideoID, &h.StartMs, &h.EndMs, &h.Reason, &h.PlacedBy, &pa, &h.LiftedBy, &la, &h.LiftReason)
	h.PlacedAt = time.UnixMilli(pa)
	if la != 0 {
		h.LiftedAt = time.UnixMilli(la)
	}
	return h, classify(err)
}

// CreateHold inserts h and returns it with its id.
func (d *DB) CreateHold(ctx context.Context, h Hold) (Hold, error) {
	id, err := d.insert(ctx, `INSERT INTO holds (camera_id, video_id, start_ms, end_ms, reason, placed_by, placed_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, h.CameraID, h.VideoID, h.StartMs, h.EndMs, h.Reason, h.PlacedBy, h.PlacedAt.UnixMilli())
	if err != nil {
		return Hold{}, fmt.Errorf("create hold: %w", err)
	}
	h.ID = id
	return h, nil
}

// HoldByID returns hold id.
func (d *DB) HoldByID(ctx context.Context, id int64) (Hold, error) {
	h, err := scanHold(d.queryRow(ctx, `SELECT `+holdCols+` FROM holds WHERE id = ?`, id))
	if err != nil {
		return Hold{}, fmt.Errorf("hold %d: %w", id, err)
	}
	return h, nil
}

// Holds returns the holds, newest first; only those in force when active.
func (d *DB) Holds(ctx context.Context, active bool) ([]Hold, error) {
	where := ""
	if active {
		where = " WHERE lifted_at = 0"
	}
	rows, err := d.query(ctx, `SELECT `+holdCols+` FROM holds`+where+` ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list holds: %w", err)
	}
	defer rows.Close()
	var out []Hold
	for rows.Next() {
		h, err := scanHold(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, classify(rows.Err())
}

// LiftHold records that hold id was lifted by by at at for reason. A hold
// already lifted, or missing, wraps ErrNotFound.
func (d *DB) LiftHold(ctx context.Context, id int64, by, reason string, at time.Time) error {
	res, err := d.exec(ctx, `UPDATE holds SET lifted_by = ?, lifted_at = ?, lift_reason = ? WHERE id = ? AND lifted_at = 0`,
		by, at.UnixMilli(), reason, id)
	if err != nil {
		return fmt.Errorf("lift hold %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("hold %d in force: %w", id, ErrNotFound)
	}
	return nil
}
