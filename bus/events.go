package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Event is a camera event on EventSubject(Camera, Type) (stream EVENTS).
// Its Nats-Msg-Id is ID, so a producer retrying a publish within
// DuplicateWindow stores it once.
type Event struct {
	// ID identifies the event; unique per event, 1 to 64 characters of
	// A-Z a-z 0-9 _ - (it names the event image, storage.EventImageKey).
	ID string `json:"id"`
	// Camera is the camera id.
	Camera string `json:"camera"`
	// Type is the event type id of the service interface, part 6.
	Type int `json:"type"`
	// AtMs is when the event happened, Unix milliseconds.
	AtMs int64 `json:"at_ms"`
	// ImageKey is the storage key of the event image, empty when none.
	ImageKey string `json:"image_key,omitempty"`
	// Plate and Confidence are the plate read of a licence plate event
	// (type 7): the plate text and the camera's confidence, 0 to 100.
	Plate      string  `json:"plate,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
}

// eventRedelay is how long a message whose handler failed waits before
// it is delivered again.
const eventRedelay = 2 * time.Second

// ConsumeEvents delivers every event of stream EVENTS to fn through the
// durable consumer named durable (created when missing), until ctx ends; it
// blocks. Processes sharing a durable name share the work: each event goes
// to one of them. An event is acknowledged when fn returns nil, and
// delivered again (to any of them) after a short pause when fn fails, so fn
// must be idempotent on Event.ID. Messages that do not decode are dropped
// (logged).
func (b *Bus) ConsumeEvents(ctx context.Context, durable string, fn func(context.Context, Event) error) error {
	if err := b.usable(); err != nil {
		return fmt.Errorf("consume events: %w", err)
	}
	cons, err := b.js.CreateOrUpdateConsumer(ctx, StreamEvents, jetstream.ConsumerConfig{
		Durable:       durable,
		Description:   "events into the API database",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       30 * time.Second,
		FilterSubject: SubjectEventsAll,
	})
	if err != nil {
		return fmt.Errorf("consume events: consumer %s: %w", durable, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("consume events: %w", err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	for {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return nil
			}
			b.log.Warn("events consumer", zap.Error(err))
			continue
		}
		var e Event
		if err := json.Unmarshal(msg.Data(), &e); err != nil || e.ID == "" || validCamera(e.Camera) != nil {
			b.log.Warn("event does not decode; dropped", zap.String("subject", msg.Subject()), zap.Error(err))
			_ = msg.Term()
			continue
		}
		if err := fn(ctx, e); err != nil {
			b.log.Warn("event not stored; will retry", zap.String("event", e.ID), zap.Error(err))
			_ = msg.NakWithDelay(eventRedelay)
			continue
		}
		_ = msg.Ack()
	}
}
