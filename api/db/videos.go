package db

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Video statuses (spec 3.2).
const (
	VideoCreating = 0
	VideoReady    = 1
	VideoFailed   = 2
)

// Video is a row of videos (downloadable videos).
type Video struct {
	ID          int64
	CameraID    int64
	ClientID    int64
	Description string
	StartMs     int64
	EndMs       int64
	Status      int
	// Error says why a failed video (VideoFailed) failed; "" otherwise.
	Error        string
	CreateUserID int64
	UpdateUserID int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

const videoCols = `id, camera_id, client_id, description, start_ms, end_ms, status, error, create_user_id, update_user_id, created_at, updated_at`

func scanVideo(sc interface{ Scan(...any) error }) (Video, error) {
	var v Video
	var ca, ua int64
	err := sc.Scan(&v.ID, &v.CameraID, &v.ClientID, &v.Description, &v.StartMs, &v.EndMs, &v.Status, &v.Error, &v.CreateUserID, &v.UpdateUserID, &ca, &ua)
	v.CreatedAt, v.UpdatedAt = time.UnixMilli(ca), time.UnixMilli(ua)
	return v, classify(err)
}

// CreateVideo inserts v and returns it with its id.
func (d *DB) CreateVideo(ctx context.Context, v Video) (Video, error) {
	ts := v.CreatedAt.UnixMilli()
	id, err := d.insert(ctx, `INSERT INTO videos (camera_id, client_id, description, start_ms, end_ms, status,
		create_user_id, update_user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		v.CameraID, v.ClientID, v.Description, v.StartMs, v.EndMs, v.Status, v.CreateUserID, v.UpdateUserID, ts, ts)
	if err != nil {
		return Video{}, fmt.Errorf("create video: %w", err)
	}
	v.ID, v.UpdatedAt = id, v.CreatedAt
	return v, nil
}

// Video returns video id.
func (d *DB) Video(ctx context.Context, id int64) (Video, error) {
	v, err := scanVideo(d.queryRow(ctx, `SELECT `+videoCols+` FROM videos WHERE id = ?`, id))
	if err != nil {
		return Video{}, fmt.Errorf("video %d: %w", id, err)
	}
	return v, nil
}

// Videos returns the videos of clientID (0: all), newest first, limited to
// ids when ids is not empty, at most limit.
func (d *DB) Videos(ctx context.Context, clientID int64, ids []int64, limit int) ([]Video, error) {
	var conds []string
	var args []any
	if clientID != 0 {
		conds, args = append(conds, "client_id = ?"), append(args, clientID)
	}
	if len(ids) > 0 {
		ph := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
		conds = append(conds, "id IN ("+ph+")")
		for _, id := range ids {
			args = append(args, id)
		}
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	return d.videos(ctx, "list videos", `SELECT `+videoCols+` FROM videos`+where+` ORDER BY id DESC LIMIT ?`, append(args, limit)...)
}

// SetVideoStatus records the status of video id.
func (d *DB) SetVideoStatus(ctx context.Context, id int64, status int, at time.Time) error {
	_, err := d.exec(ctx, `UPDATE videos SET status = ?, updated_at = ? WHERE id = ?`, status, at.UnixMilli(), id)
	return err
}

// SetVideoFailed records that video id failed, and why.
func (d *DB) SetVideoFailed(ctx context.Context, id int64, reason string, at time.Time) error {
	_, err := d.exec(ctx, `UPDATE videos SET status = ?, error = ?, updated_at = ? WHERE id = ?`, VideoFailed, reason, at.UnixMilli(), id)
	return err
}

// DeleteVideo removes video id.
func (d *DB) DeleteVideo(ctx context.Context, id int64) error {
	res, err := d.exec(ctx, `DELETE FROM videos WHERE id = ?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("video %d: %w", id, ErrNotFound)
	}
	return nil
}

// VideosMaking returns the videos of clientID recorded as in the making
// (VideoCreating), oldest first, at most limit.
func (d *DB) VideosMaking(ctx context.Context, clientID int64, limit int) ([]Video, error) {
	return d.videos(ctx, "videos in the making", `SELECT `+videoCols+` FROM videos WHERE client_id = ? AND status = ? ORDER BY id LIMIT ?`,
		clientID, VideoCreating, limit)
}

// VideosExpired returns videos asked for before t, oldest first, at most
// limit.
func (d *DB) VideosExpired(ctx context.Context, t time.Time, limit int) ([]Video, error) {
	return d.videos(ctx, "expired videos", `SELECT `+videoCols+` FROM videos WHERE created_at < ? ORDER BY created_at, id LIMIT ?`, t.UnixMilli(), limit)
}

// AddVideoRequest records that a user of clientID asked for a video at
// at, and forgets the requests older than keep before it.
func (d *DB) AddVideoRequest(ctx context.Context, clientID, userID int64, at time.Time, keep time.Duration) error {
	if _, err := d.exec(ctx, `DELETE FROM video_requests WHERE requested_at < ?`, at.Add(-keep).UnixMilli()); err != nil {
		return fmt.Errorf("video requests: %w", err)
	}
	if _, err := d.exec(ctx, `INSERT INTO video_requests (client_id, user_id, requested_at) VALUES (?, ?, ?)`,
		clientID, userID, at.UnixMilli()); err != nil {
		return fmt.Errorf("video requests: %w", err)
	}
	return nil
}

// VideoRequests counts the videos asked for since t by the users of
// clientID, and by userID among them.
func (d *DB) VideoRequests(ctx context.Context, clientID, userID int64, since time.Time) (client, user int, err error) {
	err = d.queryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN user_id = ? THEN 1 ELSE 0 END), 0)
		FROM video_requests WHERE client_id = ? AND requested_at >= ?`, userID, clientID, since.UnixMilli()).Scan(&client, &user)
	if err != nil {
		return 0, 0, fmt.Errorf("video requests: %w", classify(err))
	}
	return client, user, nil
}

// videos runs query (what names it in errors) and returns its videos.
func (d *DB) videos(ctx context.Context, what, query string, args ...any) ([]Video, error) {
	rows, err := d.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []Video
	for rows.Next() {
		v, err := scanVideo(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, classify(rows.Err())
}
