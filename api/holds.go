package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/storage"
)

// holdView is a hold as the API answers it (docs/api.md, Legal holds).
type holdView struct {
	ID         int64  `json:"id"`
	CameraID   int64  `json:"camera_id,omitempty"`
	VideoID    int64  `json:"video_id,omitempty"`
	StartAt    int64  `json:"start_at,omitempty"`
	EndAt      int64  `json:"end_at,omitempty"`
	Reason     string `json:"reason"`
	PlacedBy   string `json:"placed_by"`
	PlacedAt   int64  `json:"placed_at"`
	LiftedBy   string `json:"lifted_by,omitempty"`
	LiftedAt   int64  `json:"lifted_at,omitempty"`
	LiftReason string `json:"lift_reason,omitempty"`
	Active     bool   `json:"active"`
	// ObjectLock is the number of stored objects whose S3 Object Lock
	// legal hold this request placed or lifted (0 on a store without it).
	ObjectLock int `json:"object_lock"`
}

func viewHold(h db.Hold) holdView {
	v := holdView{ID: h.ID, CameraID: h.CameraID, VideoID: h.VideoID, StartAt: h.StartMs, EndAt: h.EndMs,
		Reason: h.Reason, PlacedBy: h.PlacedBy, PlacedAt: h.PlacedAt.UnixMilli(), LiftedBy: h.LiftedBy,
		LiftReason: h.LiftReason, Active: h.Active()}
	if !h.LiftedAt.IsZero() {
		v.LiftedAt = h.LiftedAt.UnixMilli()
	}
	return v
}

// actor names the caller of a hold operation for its audit: the operator
// token's fingerprint (the first 12 hex digits of its SHA-256, never the
// token) and the client address.
func (s *Server) actor(r *http.Request, in map[string]any) string {
	sum := sha256.Sum256([]byte(tokenOf(r, in)))
	return "operator:" + hex.EncodeToString(sum[:6]) + "@" + s.clientAddr(r).String()
}

// createHold is POST /api/v1/holds (operator): camera_id with start_at and
// end_at (Unix ms), or video_id; reason required.
func (s *Server) createHold(w http.ResponseWriter, r *http.Request) error {
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	if err := s.operatorOnly(r, in); err != nil {
		return err
	}
	errs := fieldErrors{}
	f := newFields(in, errs)
	reason := f.str("reason", true, maxText)
	h := db.Hold{Reason: reason, PlacedBy: s.actor(r, in), PlacedAt: s.now()}
	if f.present("video_id") {
		h.VideoID, _ = f.integer("video_id", true)
	} else {
		h.CameraID, _ = f.integer("camera_id", true)
		var okS, okE bool
		h.StartMs, okS = f.integer("start_at", true)
		h.EndMs, okE = f.integer("end_at", true)
		if okS && okE && h.EndMs <= h.StartMs {
			errs.add("end_at", "must be after start_at")
		}
	}
	if err := errs.err(); err != nil {
		return err
	}
	if h.VideoID != 0 {
		if _, err := s.cfg.DB.Video(r.Context(), h.VideoID); errors.Is(err, db.ErrNotFound) {
			return fail(http.StatusNotFound, "video not found")
		} else if err != nil {
			return err
		}
	} else if _, err := s.cfg.DB.Camera(r.Context(), h.CameraID); errors.Is(err, db.ErrNotFound) {
		return fail(http.StatusNotFound, "camera not found")
	} else if err != nil {
		return err
	}
	h, err = s.cfg.DB.CreateHold(r.Context(), h)
	if err != nil {
		return err
	}
	v := viewHold(h)
	v.ObjectLock = s.lockObjects(r.Context(), h, true)
	s.log.Info("legal hold placed", zap.Int64("hold", h.ID), zap.String("by", h.PlacedBy), zap.String("reason", h.Reason))
	writeJSON(w, http.StatusCreated, v)
	return nil
}

// listHolds is GET /api/v1/holds (operator); active=1 lists those in force.
func (s *Server) listHolds(w http.ResponseWriter, r *http.Request) error {
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	if err := s.operatorOnly(r, in); err != nil {
		return err
	}
	active, _ := in["active"].(string)
	hs, err := s.cfg.DB.Holds(r.Context(), active == "1")
	if err != nil {
		return err
	}
	out := []holdView{}
	for _, h := range hs {
		out = append(out, viewHold(h))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// liftHold is POST /api/v1/holds/{id}/lift (operator), reason required.
func (s *Server) liftHold(w http.ResponseWriter, r *http.Request) error {
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
	errs := fieldErrors{}
	reason := newFields(in, errs).str("reason", true, maxText)
	if err := errs.err(); err != nil {
		return err
	}
	by := s.actor(r, in)
	if err := s.cfg.DB.LiftHold(r.Context(), id, by, reason, s.now()); errors.Is(err, db.ErrNotFound) {
		return fail(http.StatusNotFound, "hold not found or already lifted")
	} else if err != nil {
		return err
	}
	h, err := s.cfg.DB.HoldByID(r.Context(), id)
	if err != nil {
		return err
	}
	v := viewHold(h)
	v.ObjectLock = s.lockObjects(r.Context(), h, false)
	s.log.Info("legal hold lifted", zap.Int64("hold", h.ID), zap.String("by", by), zap.String("reason", reason))
	writeJSON(w, http.StatusOK, v)
	return nil
}

// lockObjects places (on) or lifts the store's legal hold on the objects h
// covers, when the store enforces legal holds (S3 Object Lock). Lifting
// keeps the objects another hold in force covers. It returns the number of
// objects changed; failures are logged (the database hold still binds the
// sweeper).
func (s *Server) lockObjects(ctx context.Context, h db.Hold, on bool) int {
	lh, ok := s.cfg.Store.(storage.LegalHolder)
	if !ok {
		return 0
	}
	keys, err := s.heldKeys(ctx, h)
	if err != nil {
		s.log.Warn("legal hold: objects not listed", zap.Int64("hold", h.ID), zap.Error(err))
		return 0
	}
	keep := map[string]bool{}
	if !on {
		others, err := s.cfg.DB.Holds(ctx, true)
		if err != nil {
			s.log.Warn("legal hold: holds not read", zap.Error(err))
			return 0
		}
		for _, o := range others {
			ks, err := s.heldKeys(ctx, o)
			if err != nil {
				s.log.Warn("legal hold: objects not listed", zap.Int64("hold", o.ID), zap.Error(err))
				return 0
			}
			for _, k := range ks {
				keep[k] = true
			}
		}
	}
	n := 0
	for _, k := range keys {
		if keep[k] {
			continue
		}
		err := lh.SetLegalHold(ctx, k, on)
		if errors.Is(err, storage.ErrNoObjectLock) {
			return 0
		}
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			s.log.Warn("legal hold: object not changed", zap.String("key", k), zap.Bool("on", on), zap.Error(err))
			continue
		}
		if err == nil {
			n++
		}
	}
	return n
}

// heldKeys lists the stored objects h covers: a video's file, manifest and
// signature; a camera range's segments and gap records and the manifests
// of their hours.
func (s *Server) heldKeys(ctx context.Context, h db.Hold) ([]string, error) {
	if h.VideoID != 0 {
		return []string{storage.VideoKey(strconv.FormatInt(h.VideoID, 10)), videoManifestKey(h.VideoID), videoSignatureKey(h.VideoID)}, nil
	}
	cam := camID(h.CameraID)
	var keys []string
	for hour, err := range s.cfg.Catalogue.Range(ctx, cam, time.UnixMilli(h.StartMs), time.UnixMilli(h.EndMs)) {
		if err != nil {
			return nil, err
		}
		n := 0
		for _, sg := range hour.Segments {
			if sg.StartMs < h.EndMs && sg.EndMs() > h.StartMs {
				keys = append(keys, sg.Key)
				n++
			}
		}
		for _, g := range hour.Gaps {
			if g.StartMs < h.EndMs && (g.DurMs == 0 || g.StartMs+g.DurMs > h.StartMs) {
				keys = append(keys, g.Key)
			}
		}
		if n > 0 {
			keys = append(keys, integrity.ManifestKey(cam, hour.Start))
		}
	}
	return keys, nil
}

// videoHeld reports whether a hold in force covers video id.
func (s *Server) videoHeld(ctx context.Context, id int64) (bool, error) {
	hs, err := s.cfg.DB.Holds(ctx, true)
	if err != nil {
		return false, err
	}
	for _, h := range hs {
		if h.VideoID == id {
			return true, nil
		}
	}
	return false, nil
}
