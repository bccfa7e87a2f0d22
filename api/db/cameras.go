package db

import (
	"context"
	"fmt"
	"time"
)

// Camera is a row of cameras. Credentials are kept sealed (camera.Seal).
type Camera struct {
	ID                int64
	ClientID          int64
	Description       string
	CameraAddress     string
	Latitude          string
	Longitude         string
	ConnectionType    int
	ResolutionID      int
	HistoryDays       int
	Channel           int
	ModelID           int
	DNS               string
	Port              string
	User              string
	Stream            string
	SealedURL         string
	P2PSerial         string
	SealedP2PPassword string
	Sound             int
	// PushKeyGen is the generation of an RTMP push camera's stream key,
	// counted up by RotatePushKey; UpdateCamera leaves it.
	PushKeyGen int
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

const cameraCols = `id, client_id, description, camera_address, latitude, longitude, connection_type, resolution_id,
	history_days, channel, model_id, dns, port, cam_user, stream, sealed_url, p2p_serial, sealed_p2p_password, sound,
	push_key_gen, created_at, updated_at`

func scanCamera(sc interface{ Scan(...any) error }) (Camera, error) {
	var c Camera
	var ca, ua int64
	err := sc.Scan(&c.ID, &c.ClientID, &c.Description, &c.CameraAddress, &c.Latitude, &c.Longitude, &c.ConnectionType,
		&c.ResolutionID, &c.HistoryDays, &c.Channel, &c.ModelID, &c.DNS, &c.Port, &c.User, &c.Stream, &c.SealedURL,
		&c.P2PSerial, &c.SealedP2PPassword, &c.Sound, &c.PushKeyGen, &ca, &ua)
	c.CreatedAt, c.UpdatedAt = time.UnixMilli(ca), time.UnixMilli(ua)
	return c, classify(err)
}

// CreateCamera inserts c and returns it with its id.
func (d *DB) CreateCamera(ctx context.Context, c Camera) (Camera, error) {
	ts := c.CreatedAt.UnixMilli()
	id, err := d.insert(ctx, `INSERT INTO cameras (client_id, description, camera_address, latitude, longitude,
		connection_type, resolution_id, history_days, channel, model_id, dns, port, cam_user, stream, sealed_url,
		p2p_serial, sealed_p2p_password, sound, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ClientID, c.Description, c.CameraAddress, c.Latitude, c.Longitude, c.ConnectionType, c.ResolutionID,
		c.HistoryDays, c.Channel, c.ModelID, c.DNS, c.Port, c.User, c.Stream, c.SealedURL, c.P2PSerial,
		c.SealedP2PPassword, c.Sound, ts, ts)
	if err != nil {
		return Camera{}, fmt.Errorf("create camera: %w", err)
	}
	c.ID, c.UpdatedAt = id, c.CreatedAt
	return c, nil
}

// UpdateCamera replaces every field of camera c.ID but CreatedAt.
func (d *DB) UpdateCamera(ctx context.Context, c Camera) error {
	res, err := d.exec(ctx, `UPDATE cameras SET client_id = ?, description = ?, camera_address = ?, latitude = ?,
		longitude = ?, connection_type = ?, resolution_id = ?, history_days = ?, channel = ?, model_id = ?, dns = ?,
		port = ?, cam_user = ?, stream = ?, sealed_url = ?, p2p_serial = ?, sealed_p2p_password = ?, sound = ?,
		updated_at = ? WHERE id = ?`,
		c.ClientID, c.Description, c.CameraAddress, c.Latitude, c.Longitude, c.ConnectionType, c.ResolutionID,
		c.HistoryDays, c.Channel, c.ModelID, c.DNS, c.Port, c.User, c.Stream, c.SealedURL, c.P2PSerial,
		c.SealedP2PPassword, c.Sound, c.UpdatedAt.UnixMilli(), c.ID)
	if err != nil {
		return fmt.Errorf("update camera %d: %w", c.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("update camera %d: %w", c.ID, ErrNotFound)
	}
	return nil
}

// Camera returns camera id.
func (d *DB) Camera(ctx context.Context, id int64) (Camera, error) {
	c, err := scanCamera(d.queryRow(ctx, `SELECT `+cameraCols+` FROM cameras WHERE id = ?`, id))
	if err != nil {
		return Camera{}, fmt.Errorf("camera %d: %w", id, err)
	}
	return c, nil
}

// Cameras returns one page of cameras in id order, of clientID (0: all),
// and the total count.
func (d *DB) Cameras(ctx context.Context, clientID int64, limit, offset int) ([]Camera, int, error) {
	where, args := "", []any{}
	if clientID != 0 {
		where, args = " WHERE client_id = ?", append(args, clientID)
	}
	var total int
	if err := d.queryRow(ctx, `SELECT COUNT(*) FROM cameras`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count cameras: %w", classify(err))
	}
	rows, err := d.query(ctx, `SELECT `+cameraCols+` FROM cameras`+where+` ORDER BY id LIMIT ? OFFSET ?`, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list cameras: %w", err)
	}
	defer rows.Close()
	var out []Camera
	for rows.Next() {
		c, err := scanCamera(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	return out, total, classify(rows.Err())
}

// CamerasOfClient returns every camera of the client.
func (d *DB) CamerasOfClient(ctx context.Context, clientID int64) ([]Camera, error) {
	cams, _, err := d.Cameras(ctx, clientID, 1<<30, 0)
	return cams, err
}

// AllCameras calls fn for each camera with its client's blocked flag.
func (d *DB) AllCameras(ctx context.Context, fn func(c Camera, clientBlocked bool) error) error {
	rows, err := d.query(ctx, `SELECT `+prefixCols("c.", cameraCols)+`, k.blocked FROM cameras c JOIN clients k ON k.id = c.client_id ORDER BY c.id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	type pair struct {
		c Camera
		b bool
	}
	var all []pair
	for rows.Next() {
		var c Camera
		var ca, ua int64
		var blocked int
		if err := rows.Scan(&c.ID, &c.ClientID, &c.Description, &c.CameraAddress, &c.Latitude, &c.Longitude, &c.ConnectionType,
			&c.ResolutionID, &c.HistoryDays, &c.Channel, &c.ModelID, &c.DNS, &c.Port, &c.User, &c.Stream, &c.SealedURL,
			&c.P2PSerial, &c.SealedP2PPassword, &c.Sound, &c.PushKeyGen, &ca, &ua, &blocked); err != nil {
			return err
		}
		c.CreatedAt, c.UpdatedAt = time.UnixMilli(ca), time.UnixMilli(ua)
		all = append(all, pair{c, blocked != 0})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	for _, p := range all {
		if err := fn(p.c, p.b); err != nil {
			return err
		}
	}
	return nil
}

// RotatePushKey counts up the generation of camera id's stream key and
// returns the camera as it is then.
func (d *DB) RotatePushKey(ctx context.Context, id int64, at time.Time) (Camera, error) {
	res, err := d.exec(ctx, `UPDATE cameras SET push_key_gen = push_key_gen + 1, updated_at = ? WHERE id = ?`, at.UnixMilli(), id)
	if err != nil {
		return Camera{}, fmt.Errorf("rotate push key of camera %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Camera{}, fmt.Errorf("rotate push key of camera %d: %w", id, ErrNotFound)
	}
	return d.Camera(ctx, id)
}
