package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// playerAuth is who may use the player of a camera: the camera, its client
// and the viewer whose player_digest the page carries.
type playerAuth struct {
	cam    db.Camera
	client db.Client
	viewer viewer
	// operator is set for the operator's token (not its player links).
	operator bool
}

// playerAccess checks the player's authentication on each request: a
// player_digest of the camera valid today, or a token that may see the
// camera. A player_digest names the user it was given to; it is refused
// once that user or its client is blocked (and, signed over their access
// generations, stays refused after an unblock), once the camera belongs to
// another client, and after its day.
func (s *Server) playerAccess(r *http.Request) (playerAuth, error) {
	id, err := pathID(r, "id")
	if err != nil {
		return playerAuth{}, err
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
		return s.playerDigestAccess(r.Context(), id, pd)
	case tokenOf(r, in) != "":
		p, err := s.caller(r, in)
		if err != nil {
			return playerAuth{}, err
		}
		c, err := s.ownedCamera(r.Context(), p, id)
		if err != nil {
			return playerAuth{}, err
		}
		cl, err := s.clientOf(r.Context(), p, c)
		if err != nil {
			return playerAuth{}, err
		}
		return playerAuth{cam: c, client: cl, viewer: viewerOf(p), operator: p.operator}, nil
	}
	return playerAuth{}, fail(http.StatusUnauthorized, "player_digest or token is required")
}

// playerDigestAccess checks player_digest pd for camera id against the
// database's current state: three primary-key reads (camera, client,
// user).
func (s *Server) playerDigestAccess(ctx context.Context, id int64, pd string) (playerAuth, error) {
	uid, sig, ok := splitPlayerDigest(pd)
	if !ok {
		return playerAuth{}, errBadDigest
	}
	c, err := s.cfg.DB.Camera(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return playerAuth{}, errBadDigest
	}
	if err != nil {
		return playerAuth{}, err
	}
	cl, err := s.cfg.DB.Client(ctx, c.ClientID)
	if err != nil {
		return playerAuth{}, err
	}
	v := viewer{id: uid}
	userBlocked := false
	if uid != 0 {
		u, err := s.cfg.DB.User(ctx, uid)
		if errors.Is(err, db.ErrNotFound) {
			return playerAuth{}, errBadDigest
		}
		if err != nil {
			return playerAuth{}, err
		}
		if u.ClientID != c.ClientID {
			return playerAuth{}, errBadDigest
		}
		v.gen, userBlocked = u.AccessGen, u.Blocked
	}
	if !s.checkPlayerDigest(c, cl, v, sig) {
		return playerAuth{}, errBadDigest
	}
	if userBlocked || cl.Blocked {
		return playerAuth{}, errBlocked
	}
	return playerAuth{cam: c, client: cl, viewer: v}, nil
}

// playerQuery returns the query that authenticates the player's own
// requests (playlists, segments, live URL renewal): a player_digest of the
// viewer signed now, so a page opened with yesterday's digest during the
// grace period keeps working today.
func (s *Server) playerQuery(a playerAuth) string {
	return "player_digest=" + url.QueryEscape(s.playerDigestFor(a.cam, a.client, a.viewer))
}

// player is GET /api/camera/{id}/player: the embeddable player page.
// Player parameters that do not parse are 422 naming each field.
func (s *Server) player(w http.ResponseWriter, r *http.Request) error {
	a, err := s.playerAccess(r)
	if err != nil {
		return err
	}
	q, err := player.ParseQuery(r.URL.Query())
	if err := secondsInHighlights(r.URL.Query()); err != nil {
		return err
	}
	if qe, ok := player.AsQueryError(err); ok {
		errs := fieldErrors{}
		for _, fe := range qe.Fields {
			errs.add(fe.Field, fe.Message)
		}
		return errs.err()
	} else if err != nil {
		return fail(http.StatusBadRequest, err.Error())
	}
	id := camID(a.cam.ID)
	live := ""
	if s.cfg.Live != nil {
		live, _, _ = s.cfg.Live.LiveURLs(r.Context(), id, false, s.now().Add(s.cfg.LiveURLExpiry))
	}
	auth := s.playerQuery(a)
	player.Page(w, r, player.Params{
		CameraID: id, CameraName: a.cam.Description, LiveURL: live,
		LiveRenewURL: "/api/camera/" + id + "/player/live-url?" + auth,
		VODURL:       "/api/camera/" + id + "/vod.m3u8?" + auth,
		TimelineURL:  "/api/camera/" + id + "/player/timeline?" + auth,
		ThumbsURL:    "/api/camera/" + id + "/player/thumbs?" + auth,
		VideosURL:    "/api/camera/" + id + "/player/videos?" + auth,
		AssetsURL:    "/api/player/", Now: s.now(), Query: q,
		Status: s.playerStatus(r.Context(), a),
	})
	return nil
}

// secondsInHighlights answers 422 for a highlight range of the player's
// query (start_ts, end_ts, start_timestamps[], end_timestamps[]: Unix
// milliseconds) given in seconds, which would highlight January 1970.
func secondsInHighlights(q url.Values) error {
	errs := fieldErrors{}
	for _, k := range []string{"start_ts", "end_ts", "start_timestamps[]", "end_timestamps[]"} {
		for i, v := range q[k] {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 || n >= minMillis {
				continue // ParseQuery names what does not parse
			}
			name := k
			if strings.HasSuffix(k, "[]") {
				name = strings.TrimSuffix(k, "[]") + "[" + strconv.Itoa(i) + "]"
			}
			errs.add(name, msgSeconds)
		}
	}
	return errs.err()
}

// playerStatus is the camera's status as the player page shows it.
func (s *Server) playerStatus(ctx context.Context, a playerAuth) player.Status {
	st := s.cameraStatus(ctx, a.cam, a.client.Blocked)
	ps := player.Status{Text: st.Text}
	if st.Code != status.Online {
		ps.Reason, ps.Detail = string(st.Reason), st.ReasonDetail
	}
	return ps
}

// playerLiveBody is the answer of the player's live URL renewal: the live
// URL operation's, with the camera's status, which the page shows over
// the video when it is not ONLINE.
type playerLiveBody struct {
	liveBody
	Status player.Status `json:"status"`
}

// playerLiveURL is GET /api/camera/{id}/player/live-url: a fresh live URL
// for the player page, which renews its live URL through it before the
// URL expires (api.LiveURLExpiry); the answer is that of the live URL
// operation.
func (s *Server) playerLiveURL(w http.ResponseWriter, r *http.Request) error {
	a, err := s.playerAccess(r)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	lb, err := s.liveAnswer(r.Context(), a.cam, false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, playerLiveBody{liveBody: lb, Status: s.playerStatus(r.Context(), a)})
	return nil
}

// vod is GET /api/camera/{id}/vod.m3u8: the recorded HLS playlist of a
// time range (from, to: Unix ms) the player plays, with the player's
// authentication. Its segment addresses are the segment operation's, with
// the same authentication, so each is checked when it is read.
func (s *Server) vod(w http.ResponseWriter, r *http.Request) error {
	a, err := s.playerAccess(r)
	if err != nil {
		return err
	}
	if err := s.limitViewer(s.playerViewerKey(r, a)); err != nil {
		return err
	}
	id := camID(a.cam.ID)
	auth := s.playerQuery(a)
	player.VODHandler(player.VODConfig{
		Camera:    func(*http.Request) string { return id },
		Catalogue: s.readers,
		MaxRange:  s.cfg.Readers.MaxPlaylistRange,
		Sign: func(_ context.Context, key string, _ time.Duration) (string, error) {
			return "/api/camera/" + id + "/segment/" + path.Base(key) + "?" + auth, nil
		},
		Rendition: s.renditionURLs(id, auth),
		Log:       s.log,
	}).ServeHTTP(w, r)
	return nil
}

// segment is GET /api/camera/{id}/segment/{file}: with the player's
// authentication, a redirect (302) to a storage URL of the recording
// segment file ({startMs}_{durMs}_{initSize}.mp4, or {startMs}_{durMs}.mp4
// for a segment stored in the older form) valid storage.signed_url_expiry.
// A file name that is not a segment's is 404.
func (s *Server) segment(w http.ResponseWriter, r *http.Request) error {
	a, err := s.playerAccess(r)
	if err != nil {
		return err
	}
	key := storage.SegmentKeyOfName(camID(a.cam.ID), r.PathValue("file"))
	if key == "" {
		return fail(http.StatusNotFound, "no such segment")
	}
	u, err := s.cfg.Store.SignedURL(r.Context(), key, s.cfg.SignedURLExpiry)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u, http.StatusFound)
	return nil
}
