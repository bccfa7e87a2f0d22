package api

import (
	"net/http"
	"path"

	"github.com/vigia/vigia/storage"
)

// renditionURLs returns the addresses of a segment's H.264 rendition for
// the recorded playlist of camera id (with the player's authentication
// auth), or nil when the server has no renditions.
func (s *Server) renditionURLs(id, auth string) func(*http.Request, string) (string, string) {
	if s.cfg.Renditions == nil {
		return nil
	}
	return func(_ *http.Request, key string) (string, string) {
		u := "/api/camera/" + id + "/segment-h264/" + path.Base(key) + "?" + auth + "&part="
		return u + "init", u + "media"
	}
}

// segmentH264 is GET /api/camera/{id}/segment-h264/{file}?part=init|media:
// with the player's authentication, the init part or the fragments of the
// H.264 rendition of a recording segment whose video is H.265, for a
// player in a browser without H.265 (Config.Renditions); a segment in
// H.264 is served as stored. A file name that is not a segment's, or a
// server without renditions, is 404.
func (s *Server) segmentH264(w http.ResponseWriter, r *http.Request) error {
	a, err := s.playerAccess(r)
	if err != nil {
		return err
	}
	if s.cfg.Renditions == nil {
		return fail(http.StatusNotFound, "this server makes no H.264 renditions")
	}
	id := camID(a.cam.ID)
	key := storage.SegmentKeyOfName(id, r.PathValue("file"))
	if key == "" {
		return fail(http.StatusNotFound, "no such segment")
	}
	r2 := r.Clone(r.Context())
	q := r2.URL.Query()
	q.Set("key", key)
	r2.URL.RawQuery = q.Encode()
	r2.SetPathValue("id", id)
	s.cfg.Renditions.ServeHTTP(w, r2)
	return nil
}
