package api

import (
	"encoding/json"
	"testing"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/status"
)

// publish queues messages through an Outbox of its own, as a recorder node
// publishes, and waits until they are stored.
func publish(t *testing.T, b *bus.Bus, enqueue func(o *bus.Outbox) error) {
	t.Helper()
	o := bus.NewOutbox(b, 0, nil)
	defer o.Close()
	if err := enqueue(o); err != nil {
		t.Fatal(err)
	}
	if err := o.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// publishStatus stores camera status s.
func publishStatus(t *testing.T, b *bus.Bus, s status.Status) {
	t.Helper()
	publish(t, b, func(o *bus.Outbox) error { return o.EnqueueStatus(s) })
}

// publishEvent publishes event e on its subject with its id as message id.
func publishEvent(t *testing.T, b *bus.Bus, e bus.Event) {
	t.Helper()
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	publish(t, b, func(o *bus.Outbox) error { return o.Enqueue(bus.EventSubject(e.Camera, e.Type), data, e.ID) })
}
