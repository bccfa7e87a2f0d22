package camevents

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/onvif"
)

// NotifyPattern is the route of the node's consumer addresses (a
// net/http.ServeMux pattern): a camera in push mode POSTs its Notify
// messages to {PushConfig.BaseURL}/onvif/notify/{camera}/{key}.
const NotifyPattern = "POST /onvif/notify/{camera}/{key}"

// MaxNotifyBytes is the largest Notify body taken; a longer one is
// answered 413.
const MaxNotifyBytes = onvif.MaxResponseBytes

// inboxLen bounds the Notify messages waiting for one camera's
// subscription; more are answered 503 and dropped.
const inboxLen = 16

// PushConfig configures push mode (cameras whose onvif:// URL has
// events=push).
type PushConfig struct {
	// BaseURL is the node's address as the cameras reach it
	// (http.public_url). Required.
	BaseURL string
	// Key returns the key of camera's consumer address (a signature of
	// the camera id). Required.
	Key func(camera string) string
	// Verify reports whether key is camera's. Required.
	Verify func(camera, key string) bool
	// FirstNotify is how long the first Notify message of a subscription
	// is awaited: without one the camera is taken not to reach the node,
	// and its events are pulled. It defaults to 30 seconds.
	FirstNotify time.Duration
}

// DefaultFirstNotify is PushConfig.FirstNotify's default.
const DefaultFirstNotify = 30 * time.Second

// consumerURL is camera's consumer address.
func (p *PushConfig) consumerURL(camera string) string {
	return strings.TrimSuffix(p.BaseURL, "/") + "/onvif/notify/" + url.PathEscape(camera) + "/" + url.PathEscape(p.Key(camera))
}

// runPush runs one base-notification subscription of camera id, fed by
// NotifyHandler.
func (w *Watcher) runPush(ctx context.Context, id string, client *onvif.Client, joiner *onvif.Joiner, h handlers) error {
	inbox := make(chan []onvif.Notification, inboxLen)
	w.mu.Lock()
	w.inbox[id] = inbox
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		if w.inbox[id] == inbox {
			delete(w.inbox, id)
		}
		w.mu.Unlock()
	}()
	p := &onvif.Push{
		Client:         client,
		Joiner:         joiner,
		Consumer:       w.cfg.Push.consumerURL(id),
		Notifications:  inbox,
		OnSubscribed:   h.subscribed,
		OnNotification: h.notification,
		OnEvent:        h.event,
		FirstNotify:    w.cfg.Push.FirstNotify,
	}
	if p.FirstNotify <= 0 {
		p.FirstNotify = DefaultFirstNotify
	}
	return p.Run(ctx)
}

// NotifyHandler is the node's consumer address (NotifyPattern): it takes
// the Notify messages of cameras subscribed in push mode from this node,
// authenticated by the key in the path, bounded to MaxNotifyBytes, and
// hands their notifications to the camera's subscription without ever
// waiting for it.
func (w *Watcher) NotifyHandler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		cam, key := r.PathValue("camera"), r.PathValue("key")
		if w.cfg.Push == nil || !w.cfg.Push.Verify(cam, key) {
			http.Error(rw, "invalid camera key", http.StatusForbidden)
			return
		}
		w.mu.Lock()
		inbox := w.inbox[cam]
		w.mu.Unlock()
		if inbox == nil {
			http.Error(rw, "no push subscription of this camera on this node", http.StatusNotFound)
			return
		}
		tooLarge := "the body is larger than " + strconv.Itoa(MaxNotifyBytes) + " bytes"
		if r.ContentLength > MaxNotifyBytes {
			http.Error(rw, tooLarge, http.StatusRequestEntityTooLarge)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, MaxNotifyBytes))
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(rw, tooLarge, http.StatusRequestEntityTooLarge)
			return
		}
		if err != nil {
			http.Error(rw, "the body could not be read", http.StatusBadRequest)
			return
		}
		res, err := onvif.ParseNotify(body)
		if err != nil {
			http.Error(rw, "not a Notify message", http.StatusBadRequest)
			return
		}
		select {
		case inbox <- res.Messages:
		default:
			w.log.Warn("onvif push: notifications dropped, the camera's queue is full", zap.String("camera", cam), zap.Int("notifications", len(res.Messages)))
			rw.Header().Set("Retry-After", "1")
			http.Error(rw, "busy", http.StatusServiceUnavailable)
			return
		}
		rw.WriteHeader(http.StatusOK)
	})
}
