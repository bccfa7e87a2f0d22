package player

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/catalogue"
)

// Bounds of the timeline's operations.
const (
	// DefaultMaxTimelineRange is the longest range of a timeline.
	DefaultMaxTimelineRange = DefaultMaxRange
	// MaxThumbsRange is the longest range of a thumbnails listing.
	MaxThumbsRange = 6 * time.Hour
)

// Event is an event marker of the timeline.
type Event struct {
	// AtMs is when it happened, Unix ms.
	AtMs int64 `json:"at_ms"`
	// Type is the event type id of the service interface; Description
	// its name.
	Type        int    `json:"type"`
	Description string `json:"description"`
	// Label is what the event says beside its type (a licence plate
	// read's plate), shown with it on hover; "" when nothing.
	Label string `json:"label,omitempty"`
}

// TimelineData is the answer of TimelineHandler.
type TimelineData struct {
	catalogue.Timeline
	// Events are the camera's events of the range, in time order.
	Events []Event `json:"events"`
	// RetainedFromMs is where the camera's history_days begin (Unix ms;
	// absent without retention): video recorded before it is video
	// kept around events (docs/retention.md), marked as such.
	RetainedFromMs int64 `json:"retained_from_ms,omitempty"`
}

// TimelineConfig configures TimelineHandler.
type TimelineConfig struct {
	// Catalogue reads the recordings. Required.
	Catalogue *catalogue.Catalogue

	// Camera returns the camera id of a request. It defaults to the path
	// value "id".
	Camera func(r *http.Request) string

	// Events, optional, returns the camera's events in [from, to).
	Events func(ctx context.Context, camera string, from, to time.Time) ([]Event, error)

	// RetainedFrom, optional, returns where the camera's retention begins
	// (catalogue.TimelineOptions.RetainedFrom).
	RetainedFrom func(camera string) time.Time

	// MaxRange is the longest range. It defaults to 31 days.
	MaxRange time.Duration

	// Log receives failures. Optional.
	Log *zap.Logger
}

// TimelineHandler answers GET ?from=MS&to=MS with the camera's timeline of
// the range as JSON (TimelineData): the recorded spans, the gaps with
// their causes, the time covered and the event markers. 400 for a bad
// range, 502 when listing fails.
func TimelineHandler(cfg TimelineConfig) http.Handler {
	if cfg.Camera == nil {
		cfg.Camera = func(r *http.Request) string { return r.PathValue("id") }
	}
	if cfg.MaxRange <= 0 {
		cfg.MaxRange = DefaultMaxTimelineRange
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		from, to, msg := queryRange(r, cfg.MaxRange)
		if msg != "" {
			http.Error(w, msg, http.StatusBadRequest)
			return
		}
		camera := cfg.Camera(r)
		var opts catalogue.TimelineOptions
		if cfg.RetainedFrom != nil {
			opts.RetainedFrom = cfg.RetainedFrom(camera)
		}
		tl, err := cfg.Catalogue.Timeline(r.Context(), camera, from, to, opts)
		if err != nil {
			cfg.Log.Warn("timeline failed", zap.String("camera", camera), zap.Error(err))
			http.Error(w, "listing recordings failed", http.StatusBadGateway)
			return
		}
		out := TimelineData{Timeline: tl, Events: []Event{}}
		if !opts.RetainedFrom.IsZero() {
			out.RetainedFromMs = opts.RetainedFrom.UnixMilli()
		}
		if cfg.Events != nil {
			evs, err := cfg.Events(r.Context(), camera, from, to)
			if err != nil {
				cfg.Log.Warn("timeline events failed", zap.String("camera", camera), zap.Error(err))
				http.Error(w, "listing events failed", http.StatusBadGateway)
				return
			}
			out.Events = append(out.Events, evs...)
			sort.Slice(out.Events, func(i, j int) bool { return out.Events[i].AtMs < out.Events[j].AtMs })
		}
		writeJSON(w, out)
	})
}

// Thumb is a minute thumbnail of the preview strip.
type Thumb struct {
	// TS is when it was taken, Unix seconds.
	TS int64 `json:"ts"`
	// URL reads it.
	URL string `json:"url"`
}

// ThumbsConfig configures ThumbsHandler.
type ThumbsConfig struct {
	// Catalogue lists the thumbnails. Required.
	Catalogue *catalogue.Catalogue
	// Sign returns the address of a thumbnail. Required.
	Sign func(ctx context.Context, key string) string
	// Camera returns the camera id of a request. It defaults to the path
	// value "id".
	Camera func(r *http.Request) string
}

// ThumbsHandler answers GET ?from=MS&to=MS (at most 6 hours) with the
// camera's minute thumbnails of the range, []Thumb in time order, for the
// timeline's preview strip.
func ThumbsHandler(cfg ThumbsConfig) http.Handler {
	if cfg.Camera == nil {
		cfg.Camera = func(r *http.Request) string { return r.PathValue("id") }
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		from, to, msg := queryRange(r, MaxThumbsRange)
		if msg != "" {
			http.Error(w, msg, http.StatusBadRequest)
			return
		}
		thumbs, err := cfg.Catalogue.Thumbs(r.Context(), cfg.Camera(r), catalogue.MinuteThumbs, from, to)
		switch {
		case errors.Is(err, catalogue.ErrInvalidRange):
			http.Error(w, "bad camera", http.StatusBadRequest)
			return
		case err != nil:
			http.Error(w, "listing thumbnails failed", http.StatusBadGateway)
			return
		}
		out := make([]Thumb, len(thumbs))
		for i, th := range thumbs {
			out[i] = Thumb{TS: th.TS, URL: cfg.Sign(r.Context(), th.Key)}
		}
		writeJSON(w, out)
	})
}

// queryRange reads from and to (Unix ms) of the query, at most max apart;
// msg says what is wrong.
func queryRange(r *http.Request, max time.Duration) (from, to time.Time, msg string) {
	q := r.URL.Query()
	f, errF := parseMillis(q.Get("from"))
	t, errT := parseMillis(q.Get("to"))
	switch {
	case errF != nil:
		return from, to, "from: must be a Unix time in milliseconds"
	case errT != nil:
		return from, to, "to: must be a Unix time in milliseconds"
	case t <= f:
		return from, to, "to: must be after from"
	case t-f > max.Milliseconds():
		return from, to, "to: the range is longer than " + max.String()
	}
	return time.UnixMilli(f), time.UnixMilli(t), ""
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
