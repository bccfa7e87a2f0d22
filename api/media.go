package api

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strconv"
	"time"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/storage"
)

// recordingsWindow is the span of the recordings listing from timeStamp.
const recordingsWindow = 24 * time.Hour

// maxRecordings bounds one recordings listing.
const maxRecordings = 5000

func minuteThumbPrefix(camera string, t time.Time) string {
	return storage.MinuteThumbPrefix(camera, t)
}
func hourlyThumbPrefix(camera string, t time.Time) string {
	return storage.HourlyThumbPrefix(camera, t)
}

// lastKey returns the last key under prefix ("" when none or on error).
func (s *Server) lastKey(ctx context.Context, prefix string) string {
	if prefix == "" {
		return ""
	}
	last := ""
	for o, err := range storage.Walk(ctx, s.cfg.Store, prefix) {
		if err != nil {
			return ""
		}
		last = o.Key
	}
	return last
}

// recording is one stored segment (spec 2.8). ini and dur are strings, as
// the interface states them.
type recording struct {
	Ini       string `json:"ini"`
	StartDate string `json:"start_date"`
	Dur       string `json:"dur"`
	File      string `json:"file"`
	URL       string `json:"url"`
}

// checkCameraDigest requires a valid digest (or hash, when hashOK) of
// camera c in the input.
func (s *Server) checkCameraDigest(r *http.Request, p principal, in map[string]any, c db.Camera, hashOK bool) error {
	param, purpose := "digest", PurposeDigest
	given, _ := in["digest"].(string)
	if h, _ := in["hash"].(string); given == "" && hashOK && h != "" {
		param, purpose, given = "hash", PurposeHash, h
	}
	if given == "" {
		return fieldErrors{param: {"is required"}}.err()
	}
	cl, err := s.clientOf(r.Context(), p, c)
	if err != nil {
		return err
	}
	if !s.checkDigest(purpose, c, cl, given) {
		return errBadDigest
	}
	return nil
}

// recordings is GET /camera/{id}/recordings and /cameras/{id}/recordings/:
// the segments that end after timeStamp and start within 24 hours of it.
func (s *Server) recordings(w http.ResponseWriter, r *http.Request) error {
	in, p, c, err := s.cameraRequest(w, r)
	if err != nil {
		return err
	}
	id := camID(c.ID)
	if err := s.checkCameraDigest(r, p, in, c, true); err != nil {
		return err
	}
	if err := s.limitViewer(viewerKey(p)); err != nil {
		return err
	}
	errs := fieldErrors{}
	ts, _ := newFields(in, errs).millis("timeStamp", true)
	if err := errs.err(); err != nil {
		return err
	}
	from := time.UnixMilli(ts)
	to := from.Add(recordingsWindow)
	out := []recording{}
	for h, err := range s.readers.Range(r.Context(), id, from, to) {
		if err != nil {
			return err
		}
		for _, seg := range h.Segments {
			if len(out) == maxRecordings {
				break
			}
			out = append(out, recording{
				Ini: strconv.FormatInt(seg.StartMs, 10), StartDate: s.fmtTime(seg.Start(), layoutDateTime),
				Dur: strconv.FormatInt(seg.DurMs, 10), File: path.Base(seg.Key), URL: s.signed(r.Context(), seg.Key),
			})
		}
		if len(out) == maxRecordings {
			break
		}
	}
	writeJSON(w, http.StatusOK, upperBody{Code: 0, Msg: "", Data: out})
	return nil
}

// thumbnail is one image of the thumbnail listings (spec 2.9).
type thumbnail struct {
	TS  int64  `json:"ts"`
	URL string `json:"url"`
}

// thumbs is GET /api/camera/{id}/thumbs-hourly (the hourly thumbnails of
// the UTC day of ts) and thumbs-minutes (the minute thumbnails of the UTC
// hour of ts).
func (s *Server) thumbs(hourly bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		in, p, c, err := s.cameraRequest(w, r)
		if err != nil {
			return err
		}
		id := camID(c.ID)
		if err := s.checkCameraDigest(r, p, in, c, false); err != nil {
			return err
		}
		errs := fieldErrors{}
		ts, _ := newFields(in, errs).integer("ts", true)
		if err := errs.err(); err != nil {
			return err
		}
		// The hour (minute thumbnails) or UTC day (hourly ones) of ts.
		kind, from, span := catalogue.MinuteThumbs, time.Unix(ts, 0).UTC().Truncate(time.Hour), time.Hour
		if hourly {
			kind, span = catalogue.HourlyThumbs, 24*time.Hour
			from = time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
		}
		thumbs, err := s.cfg.Catalogue.Thumbs(r.Context(), id, kind, from, from.Add(span))
		if errors.Is(err, catalogue.ErrInvalidRange) {
			return fieldErrors{"ts": {"must be Unix seconds between 1970 and 9999"}}.err()
		}
		if err != nil {
			return err
		}
		out := make([]thumbnail, len(thumbs))
		for i, th := range thumbs {
			out[i] = thumbnail{TS: th.TS, URL: s.signed(r.Context(), th.Key)}
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	}
}
