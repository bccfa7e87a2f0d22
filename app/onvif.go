package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/logging"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/onvif"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/stream"
)

// ONVIF on the recording node (docs/onvif.md): a camera whose source URL is
// onvif://user:pass@host[:port][/path][?stream=0|1] gets its RTSP address
// from the camera (GetProfiles, GetStreamUri) each time it starts; such a
// camera, and an RTSP camera whose URL carries credentials (tried once, on
// port 80 of its host), has a PullPoint subscription while it is recorded
// here, whose events are published like motion events.

// onvifScheme is the URL scheme of cameras found through ONVIF.
const onvifScheme = "onvif"

// onvifRetryMax bounds the pause between two subscriptions of a camera.
const onvifRetryMax = time.Minute

// onvifResolveTimeout bounds the discovery of one stream address.
const onvifResolveTimeout = 30 * time.Second

// onvifPart keeps the ONVIF devices of the cameras this node records.
type onvifPart struct {
	a    *App
	log  *zap.Logger
	mu   sync.Mutex
	cams map[string]onvifDevice // by camera id, set when a camera resolves
}

// onvifDevice is a camera's ONVIF device service and credentials.
type onvifDevice struct {
	url, user, pass string
	allowPrivate    bool
	// tryOnce: not named by the camera's URL (an RTSP camera with
	// credentials); given up after a first failed subscription.
	tryOnce bool
}

// onvifMessage is the JSON of an event from a camera's own analytics on
// vigia.events.{camera}.{type}: the fields of every event, its end, and
// what the camera called it.
type onvifMessage struct {
	bus.Event
	// EndMs is the event's end, Unix ms (AtMs for an instant event).
	EndMs int64 `json:"end_ms"`
	// Source is "onvif".
	Source string `json:"source"`
	// Kind is the kind of event (onvif.TopicRules labels).
	Kind string `json:"kind"`
	// Topic is the camera's topic, without namespace prefixes.
	Topic string `json:"topic"`
	// Node is the node that received it.
	Node string `json:"node,omitempty"`
}

func newONVIF(a *App) *onvifPart {
	return &onvifPart{a: a, log: a.log.With(zap.String("component", "onvif")), cams: map[string]onvifDevice{}}
}

// client returns a client of d whose connections pass the dial guard.
func (d onvifDevice) client() *onvif.Client {
	c := onvif.NewClient(d.url, d.user, d.pass)
	c.HTTP = &http.Client{
		Transport:     &http.Transport{DialContext: ingest.GuardedDialer(d.allowPrivate), MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// resolve returns the URL to record for camera c whose source URL is raw:
// an onvif:// URL is asked for its RTSP address; others come back as they
// are. It notes the camera's ONVIF device for its events.
func (p *onvifPart) resolve(c camera.Config, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return raw, nil
	}
	allowPrivate := p.a.cfg.Ingest.AllowPrivateNetworks || c.Trusted
	if !strings.EqualFold(u.Scheme, onvifScheme) {
		if (strings.EqualFold(u.Scheme, "rtsp") || strings.EqualFold(u.Scheme, "rtsps")) && u.User != nil {
			pass, _ := u.User.Password()
			p.set(c.ID, onvifDevice{url: "http://" + hostPort(u.Hostname(), "80") + "/onvif/device_service",
				user: u.User.Username(), pass: pass, allowPrivate: allowPrivate, tryOnce: true})
		}
		return raw, nil
	}
	d := onvifDevice{allowPrivate: allowPrivate}
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
	d.url = "http://" + hostPort(u.Hostname(), port) + path
	ctx, cancel := context.WithTimeout(context.Background(), onvifResolveTimeout)
	defer cancel()
	rtsp, err := streamURI(ctx, d, u.Query().Get("stream"))
	if err != nil {
		if errors.Is(err, onvif.ErrUnauthorized) {
			return "", ingest.Permanent(ingest.ReasonAuth, fmt.Errorf("camera %s: onvif: %w", c.ID, err))
		}
		return "", fmt.Errorf("camera %s: onvif stream address: %w", c.ID, err)
	}
	p.set(c.ID, d)
	return rtsp, nil
}

func hostPort(host, port string) string { return net.JoinHostPort(host, port) }

func (p *onvifPart) set(id string, d onvifDevice) {
	p.mu.Lock()
	p.cams[id] = d
	p.mu.Unlock()
}

// streamURI asks the device for the RTSP address of its first profile
// (stream "0" or "") or second (stream "1"), with the credentials added
// and the host of the device address (cameras behind NAT or port
// forwarding give their inner address).
func streamURI(ctx context.Context, d onvifDevice, stream string) (string, error) {
	c := d.client()
	if err := c.Sync(ctx); err != nil {
		return "", err
	}
	if _, err := c.Discover(ctx); err != nil {
		return "", err
	}
	profiles, err := c.GetProfiles(ctx)
	if err != nil {
		return "", err
	}
	if len(profiles) == 0 {
		return "", errors.New("the camera has no media profile")
	}
	pr := profiles[0]
	if stream == "1" && len(profiles) > 1 {
		pr = profiles[1]
	}
	raw, err := c.GetStreamUri(ctx, pr.Token)
	if err != nil {
		return "", err
	}
	su, err := url.Parse(raw)
	if err != nil || (su.Scheme != "rtsp" && su.Scheme != "rtsps") {
		return "", fmt.Errorf("stream address %q is not an RTSP URL", logging.RedactURL(raw))
	}
	dev, _ := url.Parse(d.url)
	su.Host = hostPort(dev.Hostname(), su.Port())
	if su.Port() == "" {
		su.Host = dev.Hostname()
	}
	if su.User == nil && d.user != "" {
		su.User = url.UserPassword(d.user, d.pass)
	}
	return su.String(), nil
}

// consumer is the stream.ConsumerFactory of the cameras' subscriptions:
// a camera with an ONVIF device gets one for as long as it is recorded.
func (p *onvifPart) consumer() stream.ConsumerFactory {
	return func(id string) stream.Consumer {
		p.mu.Lock()
		d, ok := p.cams[id]
		p.mu.Unlock()
		if !ok {
			return nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		c := &onvifConsumer{cancel: cancel, done: make(chan struct{})}
		go func() {
			defer close(c.done)
			p.run(ctx, id, d)
		}()
		return c
	}
}

// onvifConsumer holds a camera's subscription; it takes no media.
type onvifConsumer struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (c *onvifConsumer) Tracks([]*media.Track) {}
func (c *onvifConsumer) Unit(*media.Unit)      {}

// Close ends the subscription and waits for it to end.
func (c *onvifConsumer) Close() {
	c.cancel()
	<-c.done
}

// run subscribes to camera id's events until ctx ends, subscribing again
// after failures with a pause that doubles up to onvifRetryMax.
func (p *onvifPart) run(ctx context.Context, id string, d onvifDevice) {
	log := p.log.With(zap.String("camera", id))
	joiner := &onvif.Joiner{}
	img := newEventImages(p.a, id)
	defer img.wait()
	pause := time.Second
	for {
		subscribed := false
		pp := &onvif.PullPoint{
			Client:       d.client(),
			Joiner:       joiner,
			OnSubscribed: func() { subscribed = true },
			OnNotification: func(n onvif.Notification, _ time.Time) {
				if r, ok := onvif.Classify(n); ok && n.Operation == onvif.OpChanged {
					if on, known := onvif.State(r, n); on || !known {
						img.take(n.Path + "\x00" + onvif.SourceKey(n.Source))
					}
				}
			},
			OnEvent: func(e onvif.Event) { p.publish(ctx, id, e, img) },
		}
		err := pp.Run(ctx)
		if ctx.Err() != nil {
			return
		}
		if d.tryOnce && !subscribed {
			log.Info("camera gives no ONVIF events; not tried again while it is recorded here", zap.Error(err))
			return
		}
		if subscribed {
			pause = time.Second
		}
		log.Warn("onvif events: subscription ended; subscribing again", zap.Duration("after", pause), zap.Error(err))
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, onvifRetryMax)
	}
}

// publish stores the event's image, if one was taken, and queues the
// event on the outbox with its id as Nats-Msg-Id.
func (p *onvifPart) publish(ctx context.Context, id string, e onvif.Event, img *eventImages) {
	evID := e.ID(id)
	msg := onvifMessage{
		Event:  bus.Event{ID: evID, Camera: id, Type: e.Type, AtMs: e.Start.UnixMilli()},
		EndMs:  e.End.UnixMilli(),
		Source: "onvif", Kind: e.Label, Topic: e.Topic, Node: p.a.cfg.NodeID,
	}
	if jpeg := img.get(e.Topic + "\x00" + e.Source); len(jpeg) > 0 {
		key := storage.EventImageKey(id, evID)
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := p.a.store.Put(pctx, key, bytes.NewReader(jpeg), int64(len(jpeg)), storage.PutOptions{ContentType: "image/jpeg"})
		cancel()
		if err == nil {
			msg.ImageKey = key
		} else {
			p.log.Warn("onvif event image not stored", zap.String("camera", id), zap.String("event", evID), zap.Error(err))
		}
	}
	data, err := json.Marshal(msg)
	if err == nil {
		err = p.a.outbox.Enqueue(bus.EventSubject(id, e.Type), data, evID)
	}
	if err != nil {
		p.log.Warn("onvif event not queued", zap.String("camera", id), zap.String("event", evID), zap.Error(err))
	}
}

// maxEventImages bounds the images a camera keeps for events in progress.
const maxEventImages = 16

// eventImages are the pictures taken when events start (the node's newest
// keyframe of the camera, from the snapshot service), one at a time.
type eventImages struct {
	a      *App
	camera string
	busy   chan struct{}
	wg     sync.WaitGroup
	mu     sync.Mutex
	imgs   map[string][]byte
}

func newEventImages(a *App, camera string) *eventImages {
	return &eventImages{a: a, camera: camera, busy: make(chan struct{}, 1), imgs: map[string][]byte{}}
}

// take stores a picture for the event starting on key, unless one is
// already being taken or snapshots are unavailable.
func (ei *eventImages) take(key string) {
	if ei.a.thumbs == nil || ei.a.thumbs.svc == nil || !ei.a.thumbs.svc.Recording(ei.camera) {
		return
	}
	select {
	case ei.busy <- struct{}{}:
	default:
		return
	}
	ei.wg.Add(1)
	go func() {
		defer ei.wg.Done()
		defer func() { <-ei.busy }()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		snap, err := ei.a.thumbs.svc.Snapshot(ctx, ei.camera)
		if err != nil {
			return
		}
		jpeg := snap.JPEG
		if jpeg == nil {
			if jpeg, err = ei.a.readObject(ctx, snap.Key); err != nil {
				return
			}
		}
		ei.mu.Lock()
		defer ei.mu.Unlock()
		if len(ei.imgs) >= maxEventImages {
			clear(ei.imgs)
		}
		ei.imgs[key] = jpeg
	}()
}

// get returns and forgets the picture of key.
func (ei *eventImages) get(key string) []byte {
	ei.mu.Lock()
	defer ei.mu.Unlock()
	b := ei.imgs[key]
	delete(ei.imgs, key)
	return b
}

// wait waits for the pictures being taken.
func (ei *eventImages) wait() { ei.wg.Wait() }
