package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/player"
)

// playerAccess checks the player's authentication: a player_digest of the
// camera valid today, or a token that may see the camera. A blocked
// client's cameras are refused either way.
func (s *Server) playerAccess(w http.ResponseWriter, r *http.Request) (db.Camera, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return db.Camera{}, err
	}
	in := map[string]any{}
	for k, v := range r.URL.Query() {
		if len(v) > 0 {
			in[k] = v[len(v)-1]
		}
	}
	pd, _ := in["player_digest"].(string)
	switch {
	case pd != "":
		if !s.checkDigest(PurposePlayer, camID(id), pd) {
			return db.Camera{}, errBadDigest
		}
		c, err := s.cfg.DB.Camera(r.Context(), id)
		if errors.Is(err, db.ErrNotFound) {
			return db.Camera{}, errCameraAbsent
		}
		if err != nil {
			return db.Camera{}, err
		}
		cl, err := s.cfg.DB.Client(r.Context(), c.ClientID)
		if err != nil {
			return db.Camera{}, err
		}
		if cl.Blocked {
			return db.Camera{}, errBlocked
		}
		return c, nil
	case tokenOf(r, in) != "":
		p, err := s.caller(r, in)
		if err != nil {
			return db.Camera{}, err
		}
		return s.ownedCamera(r.Context(), p, id)
	}
	return db.Camera{}, fail(http.StatusUnauthorized, "player_digest or token is required")
}

// player is GET /api/camera/{id}/player: the embeddable player page.
// Player parameters that do not parse are 422 naming each field.
func (s *Server) player(w http.ResponseWriter, r *http.Request) error {
	c, err := s.playerAccess(w, r)
	if err != nil {
		return err
	}
	q, err := player.ParseQuery(r.URL.Query())
	if qe, ok := player.AsQueryError(err); ok {
		errs := fieldErrors{}
		for _, fe := range qe.Fields {
			errs.add(fe.Field, fe.Message)
		}
		return errs.err()
	} else if err != nil {
		return fail(http.StatusBadRequest, err.Error())
	}
	id := camID(c.ID)
	live := ""
	if s.cfg.Live != nil {
		live, _, _ = s.cfg.Live.LiveURLs(r.Context(), id, true)
	}
	player.Page(w, r, player.Params{
		CameraID: id, CameraName: c.Description, LiveURL: live,
		VODURL:    "/api/camera/" + id + "/vod.m3u8?player_digest=" + url.QueryEscape(s.digestFor(PurposePlayer, id)),
		AssetsURL: "/api/player/", Now: s.now(), Query: q,
	})
	return nil
}

// vod is GET /api/camera/{id}/vod.m3u8: the recorded HLS playlist of a
// time range (from, to: Unix ms) the player plays, with the player's
// authentication.
func (s *Server) vod(w http.ResponseWriter, r *http.Request) error {
	c, err := s.playerAccess(w, r)
	if err != nil {
		return err
	}
	id := camID(c.ID)
	player.VODHandler(player.VODConfig{
		Camera: func(*http.Request) string { return id },
		List:   player.StoreLister(s.cfg.Store),
		Sign: func(ctx context.Context, key string, _ time.Duration) (string, error) {
			return s.cfg.Store.SignedURL(ctx, key, s.cfg.SignedURLExpiry)
		},
		Log: s.log,
	}).ServeHTTP(w, r)
	return nil
}
