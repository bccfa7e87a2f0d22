package api

import (
	"errors"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/camera"
)

// pushKeyRotated is the answer of a stream key rotation.
type pushKeyRotated struct {
	Code    int    `json:"code"`
	Msg     string `json:"msg"`
	ID      int64  `json:"id"`
	RTMPURL string `json:"rtmp_url"`
}

// rotatePushKey is POST /api/v1/cameras/{id}/push-key (operator): the RTMP
// push camera gets a new stream key. The registry record names the new
// generation, so the node recording the camera restarts it, ending the
// session pushed with the old key, and refuses the old key from then on.
func (s *Server) rotatePushKey(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	if err := s.operatorOnly(r, in); err != nil {
		return err
	}
	ctx := r.Context()
	c, err := s.cfg.DB.Camera(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return errCameraAbsent
	} else if err != nil {
		return err
	}
	if c.ConnectionType != camera.RTMP || c.SealedURL != "" {
		return fail(http.StatusConflict, "the camera does not push over RTMP: it has no stream key")
	}
	if err := s.cp.writable(ctx, s.cfg.Registry); err != nil {
		return err
	}
	s.regMu.Lock()
	defer s.regMu.Unlock()
	if c, err = s.cfg.DB.RotatePushKey(ctx, id, s.now()); err != nil {
		return err
	}
	client, err := s.cfg.DB.Client(ctx, c.ClientID)
	if err != nil {
		return err
	}
	if err := s.syncCamera(ctx, c, client.Blocked); err != nil {
		s.log.Warn("stream key rotated but not registered", zap.Int64("camera", c.ID), zap.Error(err))
		return fail(http.StatusServiceUnavailable, fmt.Sprintf("camera %d: stream key rotated but not registered: the camera registry (NATS) did not answer; the old key is refused within %v of NATS answering again", c.ID, RegistryRepairInterval))
	}
	s.log.Info("rtmp stream key rotated", zap.Int64("camera", c.ID), zap.Int("generation", c.PushKeyGen))
	writeJSON(w, http.StatusOK, pushKeyRotated{Code: 0, Msg: "stream key rotated; the previous key is refused", ID: c.ID, RTMPURL: s.rtmpURL(c.ID, c.PushKeyGen)})
	return nil
}
