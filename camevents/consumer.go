package camevents

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/onvif"
	"github.com/vigia/vigia/stream"
)

// Consumer is the stream.ConsumerFactory of the cameras' subscriptions: a
// camera with an ONVIF device gets one for as long as it is recorded.
func (w *Watcher) Consumer() stream.ConsumerFactory {
	return func(id string) stream.Consumer {
		d, ok := w.device(id)
		if !ok {
			return nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		c := &consumer{cancel: cancel, done: make(chan struct{})}
		go func() {
			defer close(c.done)
			defer w.forget(id)
			w.run(ctx, id, d)
		}()
		return c
	}
}

// consumer holds a camera's subscription; it takes no media. Its
// goroutine ends when Close is called.
type consumer struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (c *consumer) Tracks([]*media.Track) {}
func (c *consumer) Unit(*media.Unit)      {}

// Close ends the subscription and waits for it to end.
func (c *consumer) Close() {
	c.cancel()
	<-c.done
}

// run subscribes to camera id's events until ctx ends, subscribing again
// after failures with a pause that doubles up to RetryMax.
func (w *Watcher) run(ctx context.Context, id string, d device) {
	log := w.log.With(zap.String("camera", id))
	// One client for every subscription of the camera: its connections and
	// its clock offset (onvif.Client.Sync) carry over, so an event that
	// spans a re-subscription is timed alike at both ends.
	client := d.client()
	joiner := &onvif.Joiner{}
	img := newImages(w.cfg.Snapshot, id)
	defer img.wait()
	pause := time.Second
	push := d.push && w.cfg.Push != nil
	for {
		subscribed := false
		h := handlers{
			subscribed: func() { subscribed = true },
			notification: func(n onvif.Notification, _ time.Time) {
				r, ok := onvif.Classify(n)
				if !ok {
					return
				}
				w.sawTopic(id, r)
				if n.Operation == onvif.OpChanged {
					if on, known := onvif.State(r, n); on || !known {
						img.take(n.Path + "\x00" + onvif.SourceKey(n.Source))
					}
				}
			},
			event: func(e onvif.Event) { w.publish(ctx, id, e, img) },
		}
		var err error
		if push {
			err = w.runPush(ctx, id, client, joiner, h)
		} else {
			err = w.runPull(ctx, client, joiner, h)
		}
		if ctx.Err() != nil {
			return
		}
		w.forget(id)
		if push && pushRefused(err, subscribed) {
			log.Warn("onvif events: the camera does not push its events to this node; pulling them while it is recorded here", zap.Error(err))
			push, pause = false, time.Second
			continue
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
		pause = min(2*pause, RetryMax)
	}
}

// pushRefused reports whether a push subscription's end says push mode
// does not work with this camera: no Notify reached the node, or the
// camera refused Subscribe with a fault other than an authentication one.
func pushRefused(err error, subscribed bool) bool {
	if errors.Is(err, onvif.ErrNoNotify) {
		return true
	}
	var f *onvif.Fault
	return !subscribed && errors.As(err, &f) && !errors.Is(err, onvif.ErrUnauthorized)
}

// handlers are what one subscription run calls, on its goroutine.
type handlers struct {
	subscribed   func()
	notification func(onvif.Notification, time.Time)
	event        func(onvif.Event)
}

// runPull runs one PullPoint subscription.
func (w *Watcher) runPull(ctx context.Context, client *onvif.Client, joiner *onvif.Joiner, h handlers) error {
	pp := &onvif.PullPoint{
		Client:         client,
		Joiner:         joiner,
		OnSubscribed:   h.subscribed,
		OnNotification: h.notification,
		OnEvent:        h.event,
	}
	return pp.Run(ctx)
}

// publish hands the event, with its image if one was taken, to
// Config.Publish.
func (w *Watcher) publish(ctx context.Context, id string, e onvif.Event, img *images) {
	if !w.keepsEvent(id, e.Type) {
		return
	}
	ev := Event{ID: e.ID(id), Camera: id, Type: e.Type, Kind: e.Label, Topic: e.Topic, Start: e.Start, End: e.End,
		Image: img.get(e.Topic + "\x00" + e.Source)}
	if err := w.cfg.Publish(ctx, ev); err != nil {
		w.log.Warn("onvif event not published", zap.String("camera", id), zap.String("event", ev.ID), zap.Error(err))
	}
}
