package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/storage"
)

// maxVideosListed bounds the downloadable video listing.
const maxVideosListed = 500

// videoCreated is the data of the create response (spec 2.10).
type videoCreated struct {
	ID           int64   `json:"id"`
	CameraID     int64   `json:"camera_id"`
	CameraName   string  `json:"camera_name"`
	Description  string  `json:"description"`
	StartDate    string  `json:"start_date"`
	EndDate      string  `json:"end_date"`
	StartDateF   string  `json:"StartDateF"`
	EndDateF     string  `json:"EndDateF"`
	CreateUserID int64   `json:"create_user_id"`
	UpdateUserID int64   `json:"update_user_id"`
	Status       int     `json:"status"`
	LastThumb    string  `json:"last_thumb"`
	UrlDrive     string  `json:"UrlDrive"`
	CreatedAt    phpDate `json:"created_at"`
	UpdatedAt    phpDate `json:"updated_at"`
}

// videoCreateBody is the create response.
type videoCreateBody struct {
	Code       int          `json:"code"`
	Msg        string       `json:"msg"`
	VideoThumb string       `json:"video_thumb"`
	Data       videoCreated `json:"data"`
}

// videoListed is a record of the listing (spec 2.10).
type videoListed struct {
	ID          int64  `json:"id"`
	Description string `json:"description"`
	URL         string `json:"url"`
	StartDateF  string `json:"startDateF"`
	EndDateF    string `json:"endDateF"`
	TSStart     int64  `json:"tsStart"`
	TSEnd       int64  `json:"tsEnd"`
	CameraName  string `json:"camera_name"`
	Status      int    `json:"status"`
	LastThumb   string `json:"last_thumb"`
	VideoThumb  string `json:"video_thumb"`
	// Error says why a video of status 2 failed; absent otherwise. Not a
	// field of the spec.
	Error string `json:"error,omitempty"`
	// Manifest and ManifestSig are signed URLs of the video's manifest and
	// its detached Ed25519 signature (docs/export.md), once it is ready.
	Manifest    string `json:"manifest"`
	ManifestSig string `json:"manifest_sig"`
}

// videoListBody is the listing response.
type videoListBody struct {
	Code int           `json:"code"`
	Msg  string        `json:"msg"`
	Data []videoListed `json:"data"`
}

// createVideo is POST /v2/api/drives: camera_id, start_at and end_at (Unix
// ms) and description, from the query or the body; optionally codec
// ("h264" for a video in H.264 whatever the recordings' codec, "recorded"
// or absent for the recordings as they are; not a field of the spec).
func (s *Server) createVideo(w http.ResponseWriter, r *http.Request) error {
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	p, err := s.caller(r, in)
	if err != nil {
		return err
	}
	errs := fieldErrors{}
	f := newFields(in, errs)
	camID64, _ := f.integer("camera_id", true)
	start, okS := f.integer("start_at", true)
	end, okE := f.millis("end_at", true)
	desc := f.str("description", true, maxText)
	codec := f.str("codec", false, 16)
	switch codec {
	case "", "recorded":
		codec = ""
	case "h264":
	default:
		errs.add("codec", `must be "h264" or "recorded"`)
	}
	switch {
	case !okS:
	case start < 0:
		errs.add("start_at", "must be Unix milliseconds")
	case start < minMillis:
		errs.add("start_at", msgSeconds)
	}
	if okS && okE {
		switch {
		case start < 0:
		case end <= start:
			errs.add("end_at", "must be after start_at")
		case end-start > s.cfg.MaxVideoDuration.Milliseconds(): // in ms: a Duration of the span may overflow
			errs.add("end_at", "the video may last at most "+s.cfg.MaxVideoDuration.String())
		case start > s.now().UnixMilli():
			errs.add("start_at", "must not be in the future")
		}
	}
	if err := errs.err(); err != nil {
		return err
	}
	cam, err := s.ownedCamera(r.Context(), p, camID64)
	if err != nil {
		return err
	}
	if s.cfg.Exporter == nil {
		writeJSON(w, http.StatusOK, envelope{Code: 1, Msg: "downloadable videos are not available on this service"})
		return nil
	}
	now := s.now()
	s.videoMu.Lock()
	err = s.admitVideo(r.Context(), p, now)
	var v db.Video
	if err == nil {
		v, err = s.cfg.DB.CreateVideo(r.Context(), db.Video{CameraID: cam.ID, ClientID: cam.ClientID, Description: desc,
			StartMs: start, EndMs: end, Status: db.VideoCreating, CreateUserID: p.userID(), UpdateUserID: p.userID(), CreatedAt: now})
	}
	s.videoMu.Unlock()
	if err != nil {
		return err
	}
	// The job holds what is recorded by now, while the camera is the
	// caller's: a job run later (queued, retried) never reaches into the
	// video of a client the camera has moved to since.
	job := Job{ID: strconv.FormatInt(v.ID, 10), Camera: camID(cam.ID), StartMs: start, EndMs: min(end, now.UnixMilli()), Description: desc, Codec: codec}
	if err := s.cfg.Exporter.Submit(r.Context(), job); err != nil {
		s.log.Warn("export job not submitted", zap.Int64("video", v.ID), zap.Error(err))
		_ = s.cfg.DB.SetVideoFailed(r.Context(), v.ID, "not queued: "+err.Error(), now)
		return err
	}
	id := camID(cam.ID)
	writeJSON(w, http.StatusOK, videoCreateBody{
		Code: 0, Msg: "the video is being generated", VideoThumb: s.signed(r.Context(), s.thumbAt(r.Context(), id, time.UnixMilli(start), now)),
		Data: videoCreated{ID: v.ID, CameraID: cam.ID, CameraName: cam.Description, Description: desc,
			StartDate: s.fmtTime(time.UnixMilli(start), layoutDateTime), EndDate: s.fmtTime(time.UnixMilli(end), layoutDateTime),
			StartDateF: s.fmtTime(time.UnixMilli(start), layoutBR), EndDateF: s.fmtTime(time.UnixMilli(end), layoutBR),
			CreateUserID: v.CreateUserID, UpdateUserID: v.UpdateUserID, Status: v.Status,
			LastThumb: s.signed(r.Context(), s.latestThumb(r.Context(), id)), UrlDrive: "",
			CreatedAt: s.phpDate(v.CreatedAt), UpdatedAt: s.phpDate(v.UpdatedAt)},
	})
	return nil
}

// thumbAt returns the minute thumbnail nearest after t within its hour and
// before until, or "".
func (s *Server) thumbAt(ctx context.Context, camera string, t, until time.Time) string {
	sec := time.Unix(t.Unix(), 0)
	end := t.UTC().Truncate(time.Hour).Add(time.Hour)
	if until.Before(end) {
		end = until
	}
	if !end.After(sec) {
		return ""
	}
	thumbs, err := s.cfg.Catalogue.Thumbs(ctx, camera, catalogue.MinuteThumbs, sec, end)
	if err != nil || len(thumbs) == 0 {
		return ""
	}
	return thumbs[0].Key
}

// refreshVideo asks the exporter for the state of a video under creation
// and records a change.
func (s *Server) refreshVideo(ctx context.Context, v *db.Video) string {
	key := storage.VideoKey(strconv.FormatInt(v.ID, 10))
	if v.Status != db.VideoCreating || s.cfg.Exporter == nil {
		return key
	}
	st, err := s.cfg.Exporter.State(ctx, strconv.FormatInt(v.ID, 10))
	if err != nil {
		return key
	}
	if st.Key != "" {
		key = st.Key
	}
	switch {
	case st.Status == db.VideoFailed:
		reason := st.Reason
		if reason == "" {
			reason = "the video could not be made"
		}
		if err := s.cfg.DB.SetVideoFailed(ctx, v.ID, reason, s.now()); err == nil {
			v.Status, v.Error = db.VideoFailed, reason
		}
	case st.Status != v.Status:
		if err := s.cfg.DB.SetVideoStatus(ctx, v.ID, st.Status, s.now()); err == nil {
			v.Status = st.Status
		}
	}
	return key
}

// listVideos is GET /v2/api/drives, optionally limited to ids.
func (s *Server) listVideos(w http.ResponseWriter, r *http.Request) error {
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
	var ids []int64
	if raw, _ := in["ids"].(string); strings.TrimSpace(raw) != "" {
		for _, part := range strings.Split(raw, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
			if err != nil || n < 1 {
				return fieldErrors{"ids": {"must be video ids separated by commas"}}.err()
			}
			ids = append(ids, n)
		}
	}
	vs, err := s.cfg.DB.Videos(r.Context(), p.clientID(), ids, maxVideosListed)
	if err != nil {
		return err
	}
	out := videoListBody{Code: 0, Msg: "", Data: []videoListed{}}
	// Fields that describe the camera as it is now (its name, its latest
	// picture) are given only while the camera is the caller's: a video
	// stays its maker's client's after the camera moves to another client,
	// and the camera's present does not.
	names := map[int64]string{}
	current := map[int64]bool{}
	for i := range vs {
		v := &vs[i]
		key := s.refreshVideo(r.Context(), v)
		name, ok := names[v.CameraID]
		if !ok {
			if c, err := s.cfg.DB.Camera(r.Context(), v.CameraID); err == nil && (p.operator || c.ClientID == p.client.ID) {
				name, current[v.CameraID] = c.Description, true
			}
			names[v.CameraID] = name
		}
		id := camID(v.CameraID)
		// The video's thumbnail is the first picture of its range made by
		// the time it was asked for, when the camera was its client's.
		until := time.UnixMilli(min(v.EndMs, v.CreatedAt.UnixMilli()))
		rec := videoListed{ID: v.ID, Description: v.Description,
			StartDateF: s.fmtTime(time.UnixMilli(v.StartMs), layoutDateTime), EndDateF: s.fmtTime(time.UnixMilli(v.EndMs), layoutDateTime),
			TSStart: v.StartMs, TSEnd: v.EndMs, CameraName: name, Status: v.Status,
			VideoThumb: s.signed(r.Context(), s.thumbAt(r.Context(), id, time.UnixMilli(v.StartMs), until))}
		if current[v.CameraID] {
			rec.LastThumb = s.signed(r.Context(), s.latestThumb(r.Context(), id))
		}
		if v.Status == db.VideoReady {
			rec.URL = s.signed(r.Context(), key)
			rec.Manifest, rec.ManifestSig = s.signed(r.Context(), videoManifestKey(v.ID)), s.signed(r.Context(), videoSignatureKey(v.ID))
		}
		if v.Status == db.VideoFailed {
			rec.Error = v.Error
			if rec.Error == "" {
				rec.Error = "the video could not be made"
			}
		}
		out.Data = append(out.Data, rec)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// deleteVideo is POST /v2/api/drives/delete/{id}: the row and the stored
// video are removed.
func (s *Server) deleteVideo(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	in, err := s.readInput(w, r)
	if err != nil {
		return err
	}
	p, err := s.caller(r, in)
	if err != nil {
		return err
	}
	v, err := s.cfg.DB.Video(r.Context(), id)
	if errors.Is(err, db.ErrNotFound) || err == nil && !p.operator && v.ClientID != p.client.ID {
		return fail(http.StatusNotFound, "video not found")
	}
	if err != nil {
		return err
	}
	if held, err := s.videoHeld(r.Context(), id); err != nil {
		return err
	} else if held {
		return fail(http.StatusConflict, "the video is under a legal hold")
	}
	if err := s.removeVideo(r.Context(), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
		Data []any  `json:"data"`
	}{0, "video removed", []any{}})
	return nil
}
