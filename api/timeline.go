package api

import (
	"context"
	"net/http"
	"time"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/player"
)

// maxTimelineEvents bounds the event markers of one timeline.
const maxTimelineEvents = 2000

// playerTimeline is GET /api/camera/{id}/player/timeline?from=MS&to=MS:
// with the player's authentication, the camera's timeline of the range
// (player.TimelineHandler: recorded spans, gaps with their causes, the
// time covered) with the camera's events as markers. Gaps older than the
// camera's history_days are retention.
func (s *Server) playerTimeline(w http.ResponseWriter, r *http.Request) error {
	a, err := s.playerAccess(r)
	if err != nil {
		return err
	}
	if err := s.limitViewer(s.playerViewerKey(r, a)); err != nil {
		return err
	}
	id := camID(a.cam.ID)
	player.TimelineHandler(player.TimelineConfig{
		Catalogue: s.readers,
		MaxRange:  s.cfg.Readers.MaxTimelineRange,
		Camera:    func(*http.Request) string { return id },
		Events: func(ctx context.Context, _ string, from, to time.Time) ([]player.Event, error) {
			evs, _, err := s.cfg.DB.Events(ctx, db.EventFilter{ClientID: a.cam.ClientID, CameraID: a.cam.ID,
				From: from, To: to, Limit: maxTimelineEvents})
			if err != nil {
				return nil, err
			}
			plates, err := s.eventPlates(ctx, evs)
			out := make([]player.Event, 0, len(evs))
			for _, e := range evs {
				out = append(out, player.Event{AtMs: e.At.UnixMilli(), Type: e.Type, Description: eventTypes[e.Type], Label: plates[e.UID].Plate})
			}
			return out, err
		},
		RetainedFrom: func(string) time.Time {
			if d := a.cam.HistoryDays; d > 0 {
				// Retention deletes whole hours before its cutoff.
				return s.now().Add(-time.Duration(d) * 24 * time.Hour).UTC().Truncate(time.Hour)
			}
			return time.Time{}
		},
		Log: s.log,
	}).ServeHTTP(w, r)
	return nil
}

// playerThumbs is GET /api/camera/{id}/player/thumbs?from=MS&to=MS: with
// the player's authentication, the minute thumbnails of the range (at most
// 6 hours) for the preview strip of the player's timeline, URLs signed as
// every image's.
func (s *Server) playerThumbs(w http.ResponseWriter, r *http.Request) error {
	a, err := s.playerAccess(r)
	if err != nil {
		return err
	}
	// Not rate limited: each request lists one hour's folder, and the
	// player's preview strip asks for many hours as the pointer sweeps.
	id := camID(a.cam.ID)
	player.ThumbsHandler(player.ThumbsConfig{
		Catalogue: s.cfg.Catalogue,
		Sign:      s.signed,
		Camera:    func(*http.Request) string { return id },
	}).ServeHTTP(w, r)
	return nil
}
