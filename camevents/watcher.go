package camevents

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/onvif"
)

// Scheme is the URL scheme of cameras found through ONVIF:
// onvif://user:pass@host[:port][/path][?stream=0|1][&motion=auto|camera|vigia][&events=push].
const Scheme = "onvif"

// RetryMax bounds the pause between two subscriptions of a camera.
const RetryMax = time.Minute

// ResolveTimeout bounds the discovery of one stream address.
const ResolveTimeout = 30 * time.Second

// Event is an event of a camera's own analytics, joined from its start and
// end, handed to Config.Publish.
type Event struct {
	// ID is the event's stable id (onvif.Event.ID).
	ID string
	// Camera is the camera id.
	Camera string
	// Type is the service's event type (onvif.TopicRules).
	Type int
	// Kind is the kind of event (onvif.TopicRules labels).
	Kind string
	// Topic is the camera's topic, without namespace prefixes.
	Topic string
	// Start and End are local times; End equals Start for an instant.
	Start, End time.Time
	// Image is the node's keyframe when the event began, as JPEG; nil when
	// none could be taken.
	Image []byte
}

// Config configures a Watcher.
type Config struct {
	// AllowPrivateNetworks lets every camera's ONVIF requests reach
	// private addresses (ingest.allow_private_networks); trusted cameras
	// may reach them anyway.
	AllowPrivateNetworks bool
	// Publish stores and publishes an event. Required.
	Publish func(ctx context.Context, e Event) error
	// Snapshot returns the node's newest keyframe of camera as JPEG. When
	// nil, or when it fails, events have no image.
	Snapshot func(ctx context.Context, camera string) ([]byte, error)
	// Push, when set, lets cameras whose URL asks for push mode
	// (events=push) send their events to NotifyHandler; when nil every
	// camera is pulled.
	Push *PushConfig
	// Log is the component's logger. It defaults to a no-op logger.
	Log *zap.Logger
}

// Watcher keeps the ONVIF devices of the cameras this node records and
// runs their event subscriptions.
type Watcher struct {
	cfg Config
	log *zap.Logger

	mu     sync.Mutex
	cams   map[string]device                    // by camera id, set when a camera resolves
	motion map[string]bool                      // cameras whose subscription carried a motion topic
	inbox  map[string]chan []onvif.Notification // push subscriptions running, by camera
}

// device is a camera's ONVIF device service, credentials and choices.
type device struct {
	url, user, pass string
	allowPrivate    bool
	// tryOnce: not named by the camera's URL (an RTSP camera with
	// credentials); given up after a first failed subscription.
	tryOnce bool
	// motion is the camera's motion source: MotionAuto, MotionCamera or
	// MotionVigia.
	motion string
	// push: the camera pushes its events to the node (events=push).
	push bool
}

// New returns a Watcher of cfg.
func New(cfg Config) *Watcher {
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Watcher{cfg: cfg, log: cfg.Log, cams: map[string]device{}, motion: map[string]bool{},
		inbox: map[string]chan []onvif.Notification{}}
}

// client returns a client of d whose connections pass the dial guard.
func (d device) client() *onvif.Client {
	c := onvif.NewClient(d.url, d.user, d.pass)
	c.HTTP = &http.Client{
		Transport:     &http.Transport{DialContext: ingest.GuardedDialer(d.allowPrivate), MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// Resolve returns the URL to record for camera c whose source URL is raw:
// an onvif:// URL is asked for its RTSP address; others come back as they
// are. It notes the camera's ONVIF device for its events: that of an
// onvif:// URL, or, for an RTSP URL with credentials, port 80 of its host,
// tried once. A refused password is a permanent error (ingest.Permanent).
func (w *Watcher) Resolve(c camera.Config, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return raw, nil
	}
	allowPrivate := w.cfg.AllowPrivateNetworks || c.Trusted
	if !strings.EqualFold(u.Scheme, Scheme) {
		if (strings.EqualFold(u.Scheme, "rtsp") || strings.EqualFold(u.Scheme, "rtsps")) && u.User != nil {
			pass, _ := u.User.Password()
			w.set(c.ID, device{url: "http://" + net.JoinHostPort(u.Hostname(), "80") + "/onvif/device_service",
				user: u.User.Username(), pass: pass, allowPrivate: allowPrivate, tryOnce: true, motion: MotionAuto})
		}
		return raw, nil
	}
	q := u.Query()
	d := device{allowPrivate: allowPrivate, motion: MotionAuto, push: q.Get("events") == "push"}
	if m := q.Get("motion"); m != "" {
		if !validMotion(m) {
			return "", ingest.Permanent(ingest.ReasonBadURL, fmt.Errorf("camera %s: onvif: motion %q (want auto, camera or vigia)", c.ID, m))
		}
		d.motion = m
	}
	if u.User != nil {
		d.user = u.User.Username()
		d.pass, _ = u.User.Password()
	}
	path := u.Path
	if path == "" || path == "/" {
		path = "/onvif/device_service"
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	d.url = "http://" + net.JoinHostPort(u.Hostname(), port) + path
	ctx, cancel := context.WithTimeout(context.Background(), ResolveTimeout)
	defer cancel()
	rtsp, err := StreamURI(ctx, d.client(), q.Get("stream"))
	if err != nil {
		if errors.Is(err, onvif.ErrUnauthorized) {
			return "", ingest.Permanent(ingest.ReasonAuth, fmt.Errorf("camera %s: onvif: %w", c.ID, err))
		}
		return "", fmt.Errorf("camera %s: onvif stream address: %w", c.ID, err)
	}
	w.set(c.ID, d)
	return rtsp, nil
}

func (w *Watcher) set(id string, d device) {
	w.mu.Lock()
	w.cams[id] = d
	w.mu.Unlock()
}

func (w *Watcher) device(id string) (device, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	d, ok := w.cams[id]
	return d, ok
}
