package api

import (
	"net/http"

	"github.com/vigia/vigia/api/db"
)

// playerVideo is a ready downloadable video as the player lists it: where
// to fetch it, its signed manifest and the manifest's raw Ed25519
// signature (docs/export.md).
type playerVideo struct {
	ID          int64  `json:"id"`
	Description string `json:"description"`
	StartAt     int64  `json:"start_at"`
	EndAt       int64  `json:"end_at"`
	URL         string `json:"url"`
	Manifest    string `json:"manifest"`
	ManifestSig string `json:"manifest_sig"`
}

// playerVideosBody is the answer of the player's videos operation.
type playerVideosBody struct {
	Videos []playerVideo `json:"videos"`
	// KeyURL is the address of the public key that verifies the
	// manifests' signatures.
	KeyURL string `json:"key_url"`
}

// playerVideos is GET /api/camera/{id}/player/videos (player_digest or
// token): the camera's ready downloadable videos, newest first, each with
// signed URLs of the video, its manifest and signature, for the player's
// videos list.
func (s *Server) playerVideos(w http.ResponseWriter, r *http.Request) error {
	a, err := s.playerAccess(r)
	if err != nil {
		return err
	}
	vs, err := s.cfg.DB.Videos(r.Context(), a.cam.ClientID, nil, maxVideosListed)
	if err != nil {
		return err
	}
	out := playerVideosBody{Videos: []playerVideo{}, KeyURL: "/api/v1/keys/export.pub"}
	for i := range vs {
		v := &vs[i]
		if v.CameraID != a.cam.ID {
			continue
		}
		key := s.refreshVideo(r.Context(), v)
		if v.Status != db.VideoReady {
			continue
		}
		out.Videos = append(out.Videos, playerVideo{ID: v.ID, Description: v.Description, StartAt: v.StartMs, EndAt: v.EndMs,
			URL: s.signed(r.Context(), key), Manifest: s.signed(r.Context(), videoManifestKey(v.ID)),
			ManifestSig: s.signed(r.Context(), videoSignatureKey(v.ID))})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
