package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/storage"
)

// VideoLimits bounds the downloadable videos users ask for
// (docs/security.md, Readers' cost). The operator is not bounded.
type VideoLimits struct {
	// RunningPerUser and RunningPerClient bound the videos in the making
	// at once of one user and of the users of one client. They default
	// to 2 and 8.
	RunningPerUser, RunningPerClient int
	// PerUserHour and PerClientHour bound the videos asked for in any
	// hour, removed ones included. They default to 20 and 60.
	PerUserHour, PerClientHour int
	// MaxAge, when positive, is how long a video is kept after it is asked
	// for; ExpireVideos removes the older ones a legal hold does not cover.
	MaxAge time.Duration
}

func (l *VideoLimits) defaults() {
	for _, f := range []struct {
		v   *int
		def int
	}{{&l.RunningPerUser, 2}, {&l.RunningPerClient, 8}, {&l.PerUserHour, 20}, {&l.PerClientHour, 60}} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
}

// maxVideosMaking bounds the videos in the making read to count them.
const maxVideosMaking = 200

// admitVideo refuses with 429, naming the limit, a video the caller may not
// ask for now, and otherwise records the request. Call it under videoMu.
func (s *Server) admitVideo(ctx context.Context, p principal, now time.Time) error {
	if p.operator {
		return nil
	}
	lim := s.cfg.Videos
	making, err := s.cfg.DB.VideosMaking(ctx, p.client.ID, maxVideosMaking)
	if err != nil {
		return err
	}
	user, client := 0, 0
	for i := range making {
		v := &making[i]
		s.refreshVideo(ctx, v) // the database learns a video is done when asked
		if v.Status != db.VideoCreating {
			continue
		}
		client++
		if v.CreateUserID == p.user.ID {
			user++
		}
	}
	switch {
	case user >= lim.RunningPerUser:
		return tooManyVideos(fmt.Sprintf("at most %d videos in the making at once per user (export.max_running_per_user); ask again when one is ready", lim.RunningPerUser), 0)
	case client >= lim.RunningPerClient:
		return tooManyVideos(fmt.Sprintf("at most %d videos in the making at once per client (export.max_running_per_client); ask again when one is ready", lim.RunningPerClient), 0)
	}
	clientHour, userHour, err := s.cfg.DB.VideoRequests(ctx, p.client.ID, p.user.ID, now.Add(-time.Hour))
	if err != nil {
		return err
	}
	switch {
	case userHour >= lim.PerUserHour:
		return tooManyVideos(fmt.Sprintf("at most %d videos per user in an hour (export.max_per_user_hour)", lim.PerUserHour), time.Hour)
	case clientHour >= lim.PerClientHour:
		return tooManyVideos(fmt.Sprintf("at most %d videos per client in an hour (export.max_per_client_hour)", lim.PerClientHour), time.Hour)
	}
	return s.cfg.DB.AddVideoRequest(ctx, p.client.ID, p.user.ID, now, time.Hour)
}

// tooManyVideos is the 429 of a video bound, with Retry-After when known.
func tooManyVideos(msg string, retry time.Duration) error {
	e := fail(http.StatusTooManyRequests, msg)
	if retry > 0 {
		e.header = map[string]string{"Retry-After": strconv.Itoa(int(retry.Seconds()))}
	}
	return e
}

// maxExpiredPerPass bounds the videos one ExpireVideos call removes.
const maxExpiredPerPass = 500

// ExpireVideos removes the videos asked for more than Videos.MaxAge ago
// that no legal hold covers: the export job with its file, thumbnail,
// manifest and signature, then the row. It returns how many it removed.
func (s *Server) ExpireVideos(ctx context.Context) (int, error) {
	if s.cfg.Videos.MaxAge <= 0 {
		return 0, nil
	}
	vs, err := s.cfg.DB.VideosExpired(ctx, s.now().Add(-s.cfg.Videos.MaxAge), maxExpiredPerPass)
	if err != nil || len(vs) == 0 {
		return 0, err
	}
	hs, err := s.cfg.DB.Holds(ctx, true)
	if err != nil {
		return 0, err
	}
	held := map[int64]bool{}
	for _, h := range hs {
		if h.VideoID != 0 {
			held[h.VideoID] = true
		}
	}
	n := 0
	for _, v := range vs {
		if held[v.ID] {
			continue
		}
		if err := s.removeVideo(ctx, v.ID); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// removeVideo deletes video id's job, its stored objects and its row.
func (s *Server) removeVideo(ctx context.Context, id int64) error {
	sid := strconv.FormatInt(id, 10)
	if s.cfg.Exporter != nil {
		if err := s.cfg.Exporter.Remove(ctx, sid); err != nil {
			return err
		}
	}
	if err := s.cfg.Store.Delete(ctx, []string{storage.VideoKey(sid), videoManifestKey(id), videoSignatureKey(id)}); err != nil {
		return err
	}
	if err := s.cfg.DB.DeleteVideo(ctx, id); err != nil && !errors.Is(err, db.ErrNotFound) {
		return err
	}
	return nil
}

// VideoExpiryInterval is how often RunVideoExpiry looks for expired videos.
const VideoExpiryInterval = 10 * time.Minute

// RunVideoExpiry runs ExpireVideos at once and then every interval until
// ctx ends.
func (s *Server) RunVideoExpiry(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := s.ExpireVideos(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("expiring downloadable videos; retried at the next pass", zap.Error(err))
		} else if n > 0 {
			s.log.Info("expired downloadable videos removed", zap.Int("videos", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
