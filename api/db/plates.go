package db

import (
	"context"
	"fmt"
	"strings"
)

// Plate is the plate read of a licence plate event.
type Plate struct {
	// Plate is the plate text as the camera read it.
	Plate string
	// Confidence is the camera's confidence in the read, 0 to 100; 0 when
	// the camera gave none.
	Confidence float64
}

// AddPlate stores the plate read of event uid once: a second one for the
// same event is ignored.
func (d *DB) AddPlate(ctx context.Context, uid string, p Plate) error {
	_, err := d.exec(ctx, `INSERT INTO event_plates (event_uid, plate, confidence) VALUES (?, ?, ?)
		ON CONFLICT (event_uid) DO NOTHING`, uid, p.Plate, p.Confidence)
	if err != nil {
		return fmt.Errorf("add plate of event %s: %w", uid, err)
	}
	return nil
}

// Plates returns the plate reads of the events uids that have one.
func (d *DB) Plates(ctx context.Context, uids []string) (map[string]Plate, error) {
	out := map[string]Plate{}
	if len(uids) == 0 {
		return out, nil
	}
	args := make([]any, len(uids))
	for i, u := range uids {
		args[i] = u
	}
	rows, err := d.query(ctx, `SELECT event_uid, plate, confidence FROM event_plates WHERE event_uid IN (`+
		strings.TrimSuffix(strings.Repeat("?, ", len(uids)), ", ")+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("list plates: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var uid string
		var p Plate
		if err := rows.Scan(&uid, &p.Plate, &p.Confidence); err != nil {
			return nil, err
		}
		out[uid] = p
	}
	return out, classify(rows.Err())
}
