package player

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/catalogue"
)

// SignFunc returns an address that reads the object key until expiry
// (storage.Store.SignedURL).
type SignFunc func(ctx context.Context, key string, expiry time.Duration) (string, error)

// VODConfig configures VODHandler.
type VODConfig struct {
	// Catalogue finds the segments and their init sizes. Required.
	Catalogue *catalogue.Catalogue

	// Sign signs segment addresses. Required.
	Sign SignFunc

	// Camera returns the camera id of a request. It defaults to the path
	// value "id". The API checks access before the handler runs.
	Camera func(r *http.Request) string

	// URLExpiry is the life of the signed segment addresses. It defaults to
	// 6 hours.
	URLExpiry time.Duration

	// MaxRange is the longest range a playlist covers. It defaults to 31
	// days; the playlist is written hour by hour as the hours are listed,
	// never held whole.
	MaxRange time.Duration

	// Timeout bounds listing and signing. It defaults to 60 seconds.
	Timeout time.Duration

	// Log receives listing failures. Optional.
	Log *zap.Logger

	// Rendition, optional, returns the addresses of the H.264 rendition of
	// a segment (RenditionHandler): its init part and its fragments, with
	// the request's authentication. A request with h264=1 (a page whose
	// browser decodes no H.265) gets a playlist of renditions; the
	// rendition of a segment already in H.264 is the segment itself.
	Rendition func(r *http.Request, key string) (initURI, mediaURI string)
}

// DefaultMaxRange is the longest range of a recorded playlist by default.
const DefaultMaxRange = 31 * 24 * time.Hour

// VODHandler serves a camera's recordings from the query's from to to (Unix
// milliseconds) as an HLS VOD media playlist (playlistWriter),
// segment addresses signed. The playlist is streamed: each hour of the
// range is listed (a few at once), its segments' init sizes read from the
// catalogue's cache (Stat for those it has not seen), and written, so a
// range of days costs no more memory than an hour. Answers: 200 with the
// playlist; 400 when from or to is missing, malformed, reversed or the
// range is longer than MaxRange; 404 when no segment is stored in the
// range; 502 when listing or signing fails before the first segment (after
// it, the response is cut short). Playlists are never cached (their
// addresses expire).
func VODHandler(cfg VODConfig) http.Handler {
	if cfg.Camera == nil {
		cfg.Camera = func(r *http.Request) string { return r.PathValue("id") }
	}
	if cfg.URLExpiry <= 0 {
		cfg.URLExpiry = 6 * time.Hour
	}
	if cfg.MaxRange <= 0 {
		cfg.MaxRange = DefaultMaxRange
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
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
		pl := &vodWriter{w: w, head: r.Method == http.MethodHead}
		pl.buf = bufio.NewWriterSize(pl, 32<<10)
		var rend func(key string) (string, string)
		if cfg.Rendition != nil && q.Get("h264") == "1" {
			rend = func(key string) (string, string) { return cfg.Rendition(r, key) }
		}
		err := writeVOD(ctx, cfg, camera, from, to, pl, rend)
		switch {
		case errors.Is(err, errNoSegments):
			http.Error(w, "no recordings in range", http.StatusNotFound)
		case err != nil && !pl.started:
			cfg.Log.Warn("recorded playlist failed", zap.String("camera", camera), zap.Error(err))
			http.Error(w, "listing recordings failed", http.StatusBadGateway)
		case err != nil:
			cfg.Log.Warn("recorded playlist cut short", zap.String("camera", camera), zap.Error(err))
			panic(http.ErrAbortHandler) // a playlist without its end must not pass for a whole one
		}
	})
}

// writeVOD lists the range hour by hour and writes its playlist to pl.
func writeVOD(ctx context.Context, cfg VODConfig, camera string, from, to int64, pl *vodWriter, rend func(key string) (string, string)) error {
	pw, err := newPlaylistWriter(pl.buf, from, to, cfg.Catalogue.MaxSegment().Milliseconds())
	if err != nil {
		return err
	}
	for h, err := range cfg.Catalogue.Range(ctx, camera, time.UnixMilli(from), time.UnixMilli(to)) {
		if err != nil {
			return err
		}
		if err := cfg.Catalogue.InitSizes(ctx, h.Segments); err != nil {
			return err
		}
		for _, s := range h.Segments {
			if s.InitSize <= 0 {
				continue
			}
			ps := playlistSegment{StartMs: s.StartMs, DurationMs: s.DurMs, Size: s.Size, InitSize: s.InitSize}
			if rend != nil {
				ps.InitURI, ps.URI = rend(s.Key)
			} else if ps.URI, err = cfg.Sign(ctx, s.Key, cfg.URLExpiry); err != nil {
				return err
			}
			if _, err := pw.add(ps); err != nil {
				return err
			}
		}
		if pl.head && pw.segments() > 0 {
			break // HEAD: a segment is enough to answer 200
		}
		if err := pl.buf.Flush(); err != nil {
			return err
		}
	}
	if err := pw.close(); err != nil {
		return err
	}
	return pl.buf.Flush()
}

// vodWriter sends the playlist's headers with its first bytes, so that an
// error before any segment can still be answered with a status.
type vodWriter struct {
	w       http.ResponseWriter
	buf     *bufio.Writer
	head    bool
	started bool
}

func (v *vodWriter) Write(p []byte) (int, error) {
	if !v.started {
		v.started = true
		v.w.Header().Set("Content-Type", "application/vnd.apple.mpegurl")
		v.w.WriteHeader(http.StatusOK)
	}
	if v.head {
		return len(p), nil
	}
	return v.w.Write(p)
}
