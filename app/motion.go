package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/motion"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/stream"
)

// motionMessage is the JSON of a motion event on vigia.events.{camera}.5:
// the fields every event carries (bus.Event) and the motion interval.
type motionMessage struct {
	bus.Event
	// EndMs is the media time of the last picture with motion, Unix ms.
	EndMs int64 `json:"end_ms"`
	// Area is the largest share of the picture that moved (0 to 1).
	Area float64 `json:"area"`
	// Node is the node that detected it.
	Node string `json:"node,omitempty"`
}

func (a *App) startMotion() stream.ConsumerFactory {
	cfg := a.cfg.Motion
	if !cfg.Enabled {
		return nil
	}
	settings := motion.Settings{
		Sensitivity: cfg.Sensitivity,
		MinDuration: time.Duration(cfg.MinDuration),
		MaxDuration: time.Duration(cfg.MaxDuration),
	}
	svc := motion.NewService(motion.Config{
		Settings: func(string) motion.Settings { return settings },
		Publish:  a.publishMotion,
		Decoder:  a.decoders,
		Log:      a.log.With(zap.String("component", "motion")),
	})
	a.motion = svc
	a.registerMotionMetrics(svc)
	if !svc.Available() {
		return nil
	}
	return func(camera string) stream.Consumer {
		if a.onvif != nil && !a.onvif.VigiaMotion(camera) {
			return nil
		}
		if c := svc.Consumer(camera); c != nil {
			return c
		}
		return nil
	}
}

// publishMotion stores the event image, then queues the event on the
// outbox with its id as Nats-Msg-Id; it drops the event of a camera whose
// own motion is used (camevents.Watcher.CameraMotion).
func (a *App) publishMotion(ev motion.Event) error {
	if a.onvif != nil && a.onvif.CameraMotion(ev.Camera) {
		return nil
	}
	msg := motionMessage{
		Event: bus.Event{ID: ev.ID, Camera: ev.Camera, Type: motion.EventType, AtMs: ev.Start.UnixMilli()},
		EndMs: ev.End.UnixMilli(), Area: ev.Area, Node: a.cfg.NodeID,
	}
	if len(ev.Image) > 0 {
		key := storage.EventImageKey(ev.Camera, ev.ID)
		if key == "" {
			return fmt.Errorf("event %s of camera %q: no image key", ev.ID, ev.Camera)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := a.store.Put(ctx, key, bytes.NewReader(ev.Image), int64(len(ev.Image)), storage.PutOptions{ContentType: "image/jpeg"})
		cancel()
		if err != nil {
			a.log.Warn("motion event image not stored", zap.String("camera", ev.Camera), zap.String("event", ev.ID), zap.Error(err))
		} else {
			msg.ImageKey = key
		}
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return a.outbox.Enqueue(bus.EventSubject(ev.Camera, motion.EventType), data, ev.ID)
}

func (a *App) registerMotionMetrics(svc *motion.Service) {
	metrics.RegisterMotion(a.reg, func() metrics.MotionStats {
		s := svc.Stats()
		return metrics.MotionStats{Events: s.Events, PublishErrors: s.PublishErrors, Dropped: s.Dropped,
			Looks: s.Looks, Decoded: s.Decoded, Unreadable: s.Unreadable, CPU: s.CPU}
	})
}
