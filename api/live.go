package api

import (
	"context"
	"net/http"

	"github.com/vigia/vigia/api/db"
)

// liveBody is the body of the live URL operation.
type liveBody struct {
	Code int    `json:"code"`
	Msg  string `json:"msg"`
	Data string `json:"data"`
}

// liveURL is GET or POST /api/camera/{id}/live-url and
// /api/cameras/{id}/live-url/: the signed live stream address of the
// camera on the node recording it, valid LiveURLExpiry. Without a live
// provider, or while no node records the camera, it answers code 1 with an
// empty data.
func (s *Server) liveURL(w http.ResponseWriter, r *http.Request) error {
	in, _, c, err := s.cameraRequest(w, r)
	if err != nil {
		return err
	}
	return s.writeLiveURL(w, r, c, in["p"] == "hls")
}

// writeLiveURL answers the live URL of camera c, valid LiveURLExpiry.
func (s *Server) writeLiveURL(w http.ResponseWriter, r *http.Request, c db.Camera, hls bool) error {
	b, err := s.liveAnswer(r.Context(), c, hls)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

// liveAnswer is the body of the live URL operation for camera c.
func (s *Server) liveAnswer(ctx context.Context, c db.Camera, hls bool) (liveBody, error) {
	if s.cfg.Live == nil {
		return liveBody{Code: 1, Msg: "live video is not available on this service"}, nil
	}
	live, _, err := s.cfg.Live.LiveURLs(ctx, camID(c.ID), hls, s.now().Add(s.cfg.LiveURLExpiry))
	if err != nil {
		return liveBody{}, err
	}
	if live == "" {
		return liveBody{Code: 1, Msg: "the camera is not being recorded right now"}, nil
	}
	return liveBody{Code: 0, Msg: "", Data: live}, nil
}
