package api

import (
	"context"
	"errors"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/storage"
)

// snapshotBody is the body of the snapshot operation; print is the image
// address (a string, as the sample shows it).
type snapshotBody struct {
	Code  int    `json:"code"`
	Msg   string `json:"msg"`
	Print string `json:"print"`
}

// snapshotRecent is how far back GET looks first for the latest snapshot.
const snapshotRecent = 24 * time.Hour

// snapshotStart checks the common parameters: camera, optional digest,
// optional ts (Unix seconds).
func (s *Server) snapshotStart(w http.ResponseWriter, r *http.Request) (string, int64, bool, error) {
	in, p, c, err := s.cameraRequest(w, r)
	if err != nil {
		return "", 0, false, err
	}
	id := camID(c.ID)
	if d, _ := in["digest"].(string); d != "" {
		if err := s.checkCameraDigest(r, p, in, c, false); err != nil {
			return "", 0, false, err
		}
	}
	errs := fieldErrors{}
	ts, hasTS := newFields(in, errs).integer("ts", false)
	if hasTS && ts < 0 {
		errs.add("ts", "must be Unix seconds")
	}
	if err := errs.err(); err != nil {
		return "", 0, false, err
	}
	return id, ts, hasTS, nil
}

// snapshotGet is GET /api/v1/cameras/{id}/print: the latest snapshot, or
// with ts the image of that second.
func (s *Server) snapshotGet(w http.ResponseWriter, r *http.Request) error {
	id, ts, hasTS, err := s.snapshotStart(w, r)
	if err != nil {
		return err
	}
	var key string
	if hasTS {
		key, err = s.snapshotAt(r.Context(), id, time.Unix(ts, 0))
	} else {
		key = s.latestSnapshot(r.Context(), id)
	}
	if err != nil {
		return err
	}
	if key == "" {
		writeJSON(w, http.StatusOK, snapshotBody{Code: 1, Msg: "no snapshot found"})
		return nil
	}
	writeJSON(w, http.StatusOK, snapshotBody{Code: 0, Msg: "", Print: s.signed(r.Context(), key)})
	return nil
}

// snapshotPost is POST /api/v1/cameras/{id}/print: a snapshot taken now
// by the node recording the camera.
func (s *Server) snapshotPost(w http.ResponseWriter, r *http.Request) error {
	id, _, _, err := s.snapshotStart(w, r)
	if err != nil {
		return err
	}
	if s.cfg.Snapshots == nil {
		writeJSON(w, http.StatusOK, snapshotBody{Code: 1, Msg: "snapshots are not available on this service"})
		return nil
	}
	key, err := s.cfg.Snapshots.TakeSnapshot(r.Context(), id)
	if err != nil || key == "" {
		msg := "the camera did not answer; is it online?"
		if errors.Is(err, ErrUnavailable) {
			msg = "snapshots are not available on this service"
		}
		writeJSON(w, http.StatusOK, snapshotBody{Code: 1, Msg: msg})
		return nil
	}
	writeJSON(w, http.StatusOK, snapshotBody{Code: 0, Msg: "", Print: s.signed(r.Context(), key)})
	return nil
}

// latestSnapshot returns the newest stored snapshot, looking at the last
// day first, else the newest thumbnail.
func (s *Server) latestSnapshot(ctx context.Context, camera string) string {
	prefix := storage.PrefixSnapshots + camera + "/"
	after := storage.SnapshotKey(camera, s.now().Add(-snapshotRecent))
	last := ""
	for _, start := range []string{after, ""} {
		for page, err := range storage.Pages(ctx, s.cfg.Store, prefix, storage.ListOptions{StartAfter: start}) {
			if err != nil {
				return ""
			}
			if n := len(page.Objects); n > 0 {
				last = page.Objects[n-1].Key
			}
		}
		if last != "" {
			return last
		}
	}
	return s.latestThumb(ctx, camera)
}

// snapshotAt returns the image of camera at ts: the SnapshotFinder's, else
// a snapshot stored within that second, else the minute thumbnail taken in
// the minute up to ts.
func (s *Server) snapshotAt(ctx context.Context, camera string, ts time.Time) (string, error) {
	if s.cfg.SnapshotAt != nil {
		k, err := s.cfg.SnapshotAt.SnapshotAt(ctx, camera, ts)
		if err != nil || k != "" {
			return k, err
		}
	}
	prefix := storage.PrefixSnapshots + camera + "/"
	from := ts.Truncate(time.Second).UnixMilli()
	page, err := s.cfg.Store.List(ctx, prefix, storage.ListOptions{StartAfter: prefix + strconv.FormatInt(from-1, 10) + ".jpg", Limit: 1})
	if err != nil {
		return "", err
	}
	if len(page.Objects) == 1 {
		k := page.Objects[0].Key
		if ms, err := strconv.ParseInt(strings.TrimSuffix(path.Base(k), ".jpg"), 10, 64); err == nil && ms >= from && ms < from+1000 {
			return k, nil
		}
	}
	// The minute up to ts: taken in (ts-60 s, ts].
	thumbs, err := s.cfg.Catalogue.Thumbs(ctx, camera, catalogue.MinuteThumbs, time.Unix(ts.Unix()-59, 0), time.Unix(ts.Unix()+1, 0))
	if err != nil || len(thumbs) == 0 {
		return "", err
	}
	return thumbs[len(thumbs)-1].Key, nil
}
