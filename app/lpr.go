package app

import (
	"context"
	"encoding/json"

	"github.com/vigia/vigia/api"
	"github.com/vigia/vigia/bus"
)

// publishAPIEvent queues an event the API received itself (a camera's
// plate read, already stored) on the outbox, as motion events are, so the
// events stream carries every event.
func (a *App) publishAPIEvent(_ context.Context, e api.EventIn) error {
	data, err := json.Marshal(bus.Event{ID: e.ID, Camera: e.Camera, Type: e.Type, AtMs: e.At.UnixMilli(),
		ImageKey: e.ImageKey, Plate: e.Plate, Confidence: e.Confidence})
	if err != nil {
		return err
	}
	return a.outbox.Enqueue(bus.EventSubject(e.Camera, e.Type), data, e.ID)
}
