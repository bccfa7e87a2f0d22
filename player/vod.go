package player

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/segmenter"
)

// StoredSegment is one recording segment found in storage.
type StoredSegment struct {
	// Key is the object key.
	Key string
	// StartMs and DurationMs are its wall-clock start and duration, ms.
	StartMs, DurationMs int64
	// Size is the object size; InitSize the byte size of its init part.
	Size, InitSize int64
}

// ListFunc lists a camera's stored segments that overlap [fromMs, toMs).
type ListFunc func(ctx context.Context, camera string, fromMs, toMs int64) ([]StoredSegment, error)

// SignFunc returns an address that reads the object key until expiry
// (storage.Store.SignedURL).
type SignFunc func(ctx context.Context, key string, expiry time.Duration) (string, error)

// VODConfig configures VODHandler.
type VODConfig struct {
	// List finds the segments (StoreLister). Required.
	List ListFunc

	// Sign signs segment addresses. Required.
	Sign SignFunc

	// Camera returns the camera id of a request. It defaults to the path
	// value "id". The API checks access before the handler runs.
	Camera func(r *http.Request) string

	// URLExpiry is the life of the signed segment addresses. It defaults to
	// 6 hours.
	URLExpiry time.Duration

	// MaxRange is the longest range a playlist covers. It defaults to 25
	// hours (a 24-hour timeline and some slack).
	MaxRange time.Duration

	// Timeout bounds listing and signing. It defaults to 20 seconds.
	Timeout time.Duration

	// Log receives listing failures. Optional.
	Log *zap.Logger
}

// VODHandler serves a camera's recordings from the query's from to to (Unix
// milliseconds) as an HLS VOD media playlist built by segmenter.Playlist,
// segment addresses signed. Answers: 200 with the playlist; 400 when from or
// to is missing, malformed, reversed or the range is longer than MaxRange;
// 404 when no segment is stored in the range; 502 when listing or signing
// fails. Playlists are never cached (their addresses expire).
func VODHandler(cfg VODConfig) http.Handler {
	if cfg.Camera == nil {
		cfg.Camera = func(r *http.Request) string { return r.PathValue("id") }
	}
	if cfg.URLExpiry <= 0 {
		cfg.URLExpiry = 6 * time.Hour
	}
	if cfg.MaxRange <= 0 {
		cfg.MaxRange = 25 * time.Hour
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 20 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		q := r.URL.Query()
		from, errF := parseMillis(q.Get("from"))
		to, errT := parseMillis(q.Get("to"))
		switch {
		case errF != nil:
			http.Error(w, "from: must be a Unix time in milliseconds", http.StatusBadRequest)
			return
		case errT != nil:
			http.Error(w, "to: must be a Unix time in milliseconds", http.StatusBadRequest)
			return
		case to <= from:
			http.Error(w, "to: must be after from", http.StatusBadRequest)
			return
		case to-from > cfg.MaxRange.Milliseconds():
			http.Error(w, "to: the range is longer than "+cfg.MaxRange.String(), http.StatusBadRequest)
			return
		}
		camera := cfg.Camera(r)
		ctx, cancel := context.WithTimeout(r.Context(), cfg.Timeout)
		defer cancel()
		stored, err := cfg.List(ctx, camera, from, to)
		if err != nil {
			cfg.Log.Warn("listing recordings failed", zap.String("camera", camera), zap.Error(err))
			http.Error(w, "listing recordings failed", http.StatusBadGateway)
			return
		}
		segs := make([]segmenter.PlaylistSegment, 0, len(stored))
		for _, s := range stored {
			u, err := cfg.Sign(ctx, s.Key, cfg.URLExpiry)
			if err != nil {
				cfg.Log.Warn("signing a segment address failed", zap.String("camera", camera), zap.String("key", s.Key), zap.Error(err))
				http.Error(w, "signing recordings failed", http.StatusBadGateway)
				return
			}
			segs = append(segs, segmenter.PlaylistSegment{URI: u, StartMs: s.StartMs, DurationMs: s.DurationMs, Size: s.Size, InitSize: s.InitSize})
		}
		body, err := segmenter.Playlist(segs, from, to)
		if errors.Is(err, segmenter.ErrNoSegments) {
			http.Error(w, "no recordings in range", http.StatusNotFound)
			return
		}
		if err != nil {
			http.Error(w, "bad range", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(body)
	})
}
