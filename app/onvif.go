package app

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camevents"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

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

// newONVIF builds the watcher of the cameras' own ONVIF services.
func newONVIF(a *App) *camevents.Watcher {
	return camevents.New(camevents.Config{
		AllowPrivateNetworks: a.cfg.Ingest.AllowPrivateNetworks,
		Publish:              a.publishONVIF,
		Snapshot:             a.eventKeyframe,
		Push: &camevents.PushConfig{
			BaseURL: a.URL(),
			Key:     func(camera string) string { return a.keys.Sign(sign.ONVIFNotifyKey, time.Time{}, camera) },
			Verify: func(camera, key string) bool {
				return a.keys.Verify(sign.ONVIFNotifyKey, key, time.Time{}, time.Now(), camera)
			},
		},
		Log: a.log.With(zap.String("component", "onvif")),
	})
}

// eventKeyframe is the node's newest keyframe of camera, from the snapshot
// service, as JPEG.
func (a *App) eventKeyframe(ctx context.Context, camera string) ([]byte, error) {
	if a.thumbs == nil || a.thumbs.svc == nil || !a.thumbs.svc.Recording(camera) {
		return nil, nil
	}
	snap, err := a.thumbs.svc.Snapshot(ctx, camera)
	if err != nil {
		return nil, err
	}
	if snap.JPEG != nil {
		return snap.JPEG, nil
	}
	return a.readObject(ctx, snap.Key)
}

// publishONVIF stores the event's image, if there is one, and queues the
// event on the outbox with its id as Nats-Msg-Id.
func (a *App) publishONVIF(ctx context.Context, e camevents.Event) error {
	msg := onvifMessage{
		Event:  bus.Event{ID: e.ID, Camera: e.Camera, Type: e.Type, AtMs: e.Start.UnixMilli()},
		EndMs:  e.End.UnixMilli(),
		Source: "onvif", Kind: e.Kind, Topic: e.Topic, Node: a.cfg.NodeID,
	}
	if len(e.Image) > 0 {
		key := storage.EventImageKey(e.Camera, e.ID)
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := a.store.Put(pctx, key, bytes.NewReader(e.Image), int64(len(e.Image)), storage.PutOptions{ContentType: "image/jpeg"})
		cancel()
		if err == nil {
			msg.ImageKey = key
		} else {
			a.log.Warn("onvif event image not stored", zap.String("camera", e.Camera), zap.String("event", e.ID), zap.Error(err))
		}
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return a.outbox.Enqueue(bus.EventSubject(e.Camera, e.Type), data, e.ID)
}
