package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/status"
)

// cameraCreated is a camera in the create and update responses (spec 2.4).
type cameraCreated struct {
	ID                int64  `json:"id"`
	Description       string `json:"description"`
	StreamStatus      int    `json:"stream_status"`
	StatusDescription string `json:"status_description"`
	RTMPURL           string `json:"rtmp_url,omitempty"`
	// LPRURL is where the camera pushes its plate reads (docs/events.md).
	LPRURL string `json:"lpr_url"`
}

// createCamera is POST /api/v1/cameras (operator).
func (s *Server) createCamera(w http.ResponseWriter, r *http.Request) error {
	return s.saveCamera(w, r, 0)
}

// updateCamera is PUT /api/v1/cameras/{id} (operator).
func (s *Server) updateCamera(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return s.saveCamera(w, r, id)
}

// saveCamera creates (id 0) or replaces camera id, writes the registry and
// answers 201 with the 2.4 record.
func (s *Server) saveCamera(w http.ResponseWriter, r *http.Request, id int64) error {
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	if err := s.operatorOnly(r, in); err != nil {
		return err
	}
	ctx := r.Context()
	var old db.Camera
	if id != 0 {
		if old, err = s.cfg.DB.Camera(ctx, id); errors.Is(err, db.ErrNotFound) {
			return errCameraAbsent
		} else if err != nil {
			return err
		}
	}
	errs := fieldErrors{}
	ci := s.parseCamera(ctx, in, errs)
	keepDays, keepSet := parseEventKeep(in, errs)
	if err := errs.err(); err != nil {
		return err
	}
	row := ci.row
	if ci.sourceURL != "" {
		if row.SealedURL, err = camera.Seal(s.keys, ci.sourceURL); err != nil {
			return err
		}
	}
	if ci.p2pPassword != "" {
		if row.SealedP2PPassword, err = camera.Seal(s.keys, ci.p2pPassword); err != nil {
			return err
		}
	}
	// A camera saved while NATS is down would not be recorded until NATS
	// is back: refuse it at once instead.
	if err := s.cp.writable(ctx, s.cfg.Registry); err != nil {
		return err
	}
	now := s.now()
	// The database and registry writes are one step for RepairRegistry.
	s.regMu.Lock()
	defer s.regMu.Unlock()
	if id == 0 {
		row.CreatedAt = now
		if row, err = s.cfg.DB.CreateCamera(ctx, row); err != nil {
			return err
		}
	} else {
		row.ID, row.CreatedAt, row.UpdatedAt, row.PushKeyGen = id, old.CreatedAt, now, old.PushKeyGen
		if err := s.cfg.DB.UpdateCamera(ctx, row); err != nil {
			return err
		}
	}
	if keepSet {
		if err := s.cfg.DB.SetEventKeepDays(ctx, row.ID, keepDays); err != nil {
			return err
		}
	}
	client, err := s.cfg.DB.Client(ctx, row.ClientID)
	if err != nil {
		return err
	}
	if err := s.syncCamera(ctx, row, client.Blocked); err != nil {
		s.log.Warn("camera saved but not registered", zap.Int64("camera", row.ID), zap.Error(err))
		return fail(http.StatusServiceUnavailable, fmt.Sprintf("camera %d saved but not registered: the camera registry (NATS) did not answer; it is registered within %v of NATS answering again", row.ID, RegistryRepairInterval))
	}
	rec := cameraCreated{ID: row.ID, Description: row.Description, StreamStatus: int(status.Offline), StatusDescription: status.Offline.Text(),
		LPRURL: s.lprURL(row.ID)}
	if id != 0 {
		st := s.cameraStatus(ctx, row, client.Blocked)
		rec.StreamStatus, rec.StatusDescription = int(st.Code), st.Text
	}
	if row.ConnectionType == camera.RTMP && row.SealedURL == "" {
		rec.RTMPURL = s.rtmpURL(row.ID, row.PushKeyGen)
	}
	writeJSON(w, http.StatusCreated, []cameraCreated{rec})
	return nil
}

// registryRecord is the camera's record in the NATS registry.
func (s *Server) registryRecord(c db.Camera) camera.Config {
	rec := camera.Config{
		ID: camID(c.ID), ClientID: c.ClientID, ConnectionType: c.ConnectionType, SealedURL: c.SealedURL,
		Stream: c.Stream, P2PSerial: c.P2PSerial, P2PSealedPassword: c.SealedP2PPassword,
		Sound: c.Sound == 1, HistoryDays: c.HistoryDays, PushKeyGen: c.PushKeyGen,
	}
	if res, ok := s.cfg.Info.resolution(c.ResolutionID); ok {
		rec.Width, rec.Height = res.Width, res.Height
	}
	return rec
}

// syncCamera writes the camera's registry record, or removes it when its
// client is blocked.
func (s *Server) syncCamera(ctx context.Context, c db.Camera, clientBlocked bool) error {
	if clientBlocked {
		return s.cfg.Registry.DeleteCamera(ctx, camID(c.ID))
	}
	return s.cfg.Registry.PutCamera(ctx, s.registryRecord(c))
}

// syncClientCameras applies the client's blocked flag to all its cameras.
func (s *Server) syncClientCameras(ctx context.Context, c db.Client) error {
	cams, err := s.cfg.DB.CamerasOfClient(ctx, c.ID)
	if err != nil {
		return err
	}
	for _, cam := range cams {
		if err := s.syncCamera(ctx, cam, c.Blocked); err != nil {
			return err
		}
	}
	return nil
}

// rtmpURL is where an RTMP camera pushes: the configured base, the camera
// id and its stream key at key generation gen; without a base, the push
// server's own.
func (s *Server) rtmpURL(id int64, gen int) string {
	key := camera.PushKeyGen(s.keys, camID(id), gen)
	base := s.cfg.RTMPURL
	if base == "" && s.cfg.PushURL != nil {
		u, err := url.Parse(s.cfg.PushURL(camID(id)))
		if err != nil {
			return ""
		}
		q := u.Query()
		q.Set("key", key)
		u.RawQuery = q.Encode()
		return u.String()
	}
	if base == "" {
		host := "localhost"
		if u, err := url.Parse(s.cfg.PublicURL); err == nil && u.Hostname() != "" {
			host = u.Hostname()
		}
		base = "rtmp://" + host + ":1935/live"
	}
	// The key is the one the recorders' push server checks (ingest/rtmp).
	return strings.TrimRight(base, "/") + "/" + camID(id) + "?key=" + key
}

// cameraStatus is the camera's current status: BLOQUEADA when its client
// is blocked, else the last one in the status bucket, else OFFLINE.
func (s *Server) cameraStatus(ctx context.Context, c db.Camera, clientBlocked bool) status.Status {
	if clientBlocked {
		return status.Status{Code: status.Blocked, Text: status.Blocked.Text(), Reason: status.CauseCameraBlocked}
	}
	st, ok, err := s.cfg.Status.GetStatus(ctx, camID(c.ID))
	if err != nil || !ok {
		return status.Status{Code: status.Offline, Text: status.Offline.Text()}
	}
	if st.Text == "" {
		st.Text = st.Code.Text()
	}
	return st
}
