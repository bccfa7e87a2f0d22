package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/status"
)

// camerasPerPage is the page size of the camera listing.
const camerasPerPage = 10

// cameraRecord is a camera in the listing and the single read (spec 2.5).
type cameraRecord struct {
	ID                 string  `json:"id"`
	Description        string  `json:"description"`
	StreamStatusDesc   *string `json:"stream_status_desc,omitempty"`
	Status             *string `json:"status,omitempty"`
	LiveURL            string  `json:"live_url"`
	ServerURL          string  `json:"server_url"`
	ThumbURL           string  `json:"thumb_url"`
	Digest             string  `json:"digest"`
	PlayerDigest       string  `json:"player_digest"`
	Hash               string  `json:"hash"`
	ClientID           string  `json:"client_id"`
	Address            string  `json:"address"`
	Latitude           string  `json:"latitude"`
	Longitude          string  `json:"longitude"`
	RecordingError     bool    `json:"recording_error"`
	Plan               string  `json:"plan"`
	LastRecievedWidth  int     `json:"last_recieved_width"`
	LastRecievedHeight int     `json:"last_recieved_height"`
	ResolutionError    bool    `json:"resolution_error"`
	// StatusReason and StatusDetail say why the status is not ONLINE (a
	// gap cause and its fixed text); absent while ONLINE or when no
	// reason is known. Not fields of the spec.
	StatusReason string `json:"status_reason,omitempty"`
	StatusDetail string `json:"status_detail,omitempty"`
}

// cameraList is the body of GET /api/v4/cameras.
type cameraList struct {
	Data        []cameraRecord `json:"data"`
	Total       int            `json:"total"`
	PerPage     int            `json:"per_page"`
	CurrentPage int            `json:"current_page"`
	LastPage    int            `json:"last_page"`
	From        int            `json:"from"`
	To          int            `json:"to"`
}

// cameraView builds the 2.5 record of c, of client cl, for caller p (the
// player_digest is the caller's).
func (s *Server) cameraView(ctx context.Context, p principal, c db.Camera, cl db.Client, hls, single bool) cameraRecord {
	id := camID(c.ID)
	clientBlocked := cl.Blocked
	st := s.cameraStatus(ctx, c, clientBlocked)
	rec := cameraRecord{
		ID: id, Description: c.Description,
		Digest: s.digestFor(PurposeDigest, c, cl), Hash: s.digestFor(PurposeHash, c, cl), PlayerDigest: s.playerDigestFor(c, cl, viewerOf(p)),
		ClientID: strconv.FormatInt(c.ClientID, 10), Address: c.CameraAddress, Latitude: c.Latitude, Longitude: c.Longitude,
		RecordingError: st.RecordingError, LastRecievedWidth: st.Width, LastRecievedHeight: st.Height,
		ResolutionError: st.ResolutionError, Plan: s.plan(c),
		ThumbURL: s.signed(ctx, s.latestThumb(ctx, id)),
	}
	if st.Code != status.Online {
		rec.StatusReason, rec.StatusDetail = string(st.Reason), st.ReasonDetail
	}
	text := st.Text
	if single {
		rec.Status = &text
	} else {
		rec.StreamStatusDesc = &text
	}
	if s.cfg.Live != nil && !clientBlocked {
		if live, server, err := s.cfg.Live.LiveURLs(ctx, id, hls, s.now().Add(s.cfg.LiveURLExpiry)); err == nil {
			rec.LiveURL, rec.ServerURL = live, server
		}
	}
	return rec
}

// plan is the camera's plan as text: resolution and days of history.
func (s *Server) plan(c db.Camera) string {
	name := "resolution " + strconv.Itoa(c.ResolutionID)
	if r, ok := s.cfg.Info.resolution(c.ResolutionID); ok {
		name = r.Name
	}
	days := " days"
	if c.HistoryDays == 1 {
		days = " day"
	}
	return name + " - " + strconv.Itoa(c.HistoryDays) + days
}

// listCameras is GET /api/v4/cameras.
func (s *Server) listCameras(w http.ResponseWriter, r *http.Request) error {
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	p, err := s.caller(r, in)
	if err != nil {
		return err
	}
	if err := s.limitViewer(viewerKey(p)); err != nil {
		return err
	}
	page, err := queryInt(in, "page", 1)
	if err != nil {
		return err
	}
	if page < 1 {
		return fieldErrors{"page": {"must be 1 or more"}}.err()
	}
	hls := in["p"] == "hls"
	cams, total, err := s.cfg.DB.Cameras(r.Context(), p.clientID(), camerasPerPage, int(page-1)*camerasPerPage)
	if err != nil {
		return err
	}
	out := cameraList{Data: []cameraRecord{}, Total: total, PerPage: camerasPerPage, CurrentPage: int(page),
		LastPage: max(1, (total+camerasPerPage-1)/camerasPerPage)}
	clients := map[int64]db.Client{}
	for _, c := range cams {
		cl, ok := clients[c.ClientID]
		if !ok {
			if cl, err = s.clientOf(r.Context(), p, c); err != nil {
				return err
			}
			clients[c.ClientID] = cl
		}
		out.Data = append(out.Data, s.cameraView(r.Context(), p, c, cl, hls, false))
	}
	if len(out.Data) > 0 {
		out.From = int(page-1)*camerasPerPage + 1
		out.To = out.From + len(out.Data) - 1
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getCamera is GET /api/camera-player/{id}.
func (s *Server) getCamera(w http.ResponseWriter, r *http.Request) error {
	in, p, c, err := s.cameraRequest(w, r)
	if err != nil {
		return err
	}
	cl, err := s.clientOf(r.Context(), p, c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, s.cameraView(r.Context(), p, c, cl, in["p"] == "hls", true))
	return nil
}

// signed returns a signed URL of key, "" when key is "" or signing fails.
func (s *Server) signed(ctx context.Context, key string) string {
	if key == "" {
		return ""
	}
	u, err := s.cfg.Store.SignedURL(ctx, key, s.cfg.SignedURLExpiry)
	if err != nil {
		return ""
	}
	return u
}

// hoursBack is how far latestThumb looks for a minute thumbnail.
const hoursBack = 2

// latestThumb returns the key of the camera's newest minute thumbnail of
// the last hours, or of today's hourly ones, or "".
func (s *Server) latestThumb(ctx context.Context, camera string) string {
	now := s.now()
	for h := 0; h < hoursBack; h++ {
		if k := s.lastKey(ctx, minuteThumbPrefix(camera, now.Add(-time.Duration(h)*time.Hour))); k != "" {
			return k
		}
	}
	return s.lastKey(ctx, hourlyThumbPrefix(camera, now))
}
