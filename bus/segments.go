package bus

import (
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
)

// SegmentNotice says a recording segment was stored. It is published as JSON
// on SegmentSubject(Camera) in StreamSegments, with Nats-Msg-Id = Key.
type SegmentNotice struct {
	// Camera is the camera id.
	Camera string `json:"camera"`
	// Key is the storage key of the segment object.
	Key string `json:"key"`
	// StartMs is the wall-clock start, Unix milliseconds.
	StartMs int64 `json:"start_ms"`
	// DurMs is the duration in milliseconds.
	DurMs int64 `json:"dur_ms"`
	// Size is the object size in bytes.
	Size int64 `json:"size"`
	// InitSize is the byte size of the segment's init part (its init-size
	// metadata); 0 when unknown.
	InitSize int64 `json:"init_size,omitempty"`
}

// marshalSegment validates n and returns its JSON.
func marshalSegment(n SegmentNotice) ([]byte, error) {
	if err := validCamera(n.Camera); err != nil {
		return nil, fmt.Errorf("publish segment: %w", err)
	}
	if n.Key == "" {
		return nil, fmt.Errorf("publish segment: %w: empty key", ErrInvalidMessage)
	}
	data, err := json.Marshal(n)
	if err != nil {
		return nil, fmt.Errorf("publish segment %s: encode: %w", n.Key, err)
	}
	return data, nil
}

// WatchSegments calls f with each segment notice published from now on
// (a core subscription to vigia.segments.>, nothing replayed from
// StreamSegments), on the subscription's goroutine: f must return quickly.
// Notices that do not decode are skipped. stop unsubscribes.
func (b *Bus) WatchSegments(f func(SegmentNotice)) (stop func(), err error) {
	if err := b.usable(); err != nil {
		return nil, fmt.Errorf("watch segments: %w", err)
	}
	sub, err := b.nc.Subscribe(SubjectSegmentsAll, func(m *nats.Msg) {
		var n SegmentNotice
		if json.Unmarshal(m.Data, &n) != nil || validCamera(n.Camera) != nil {
			return
		}
		f(n)
	})
	if err != nil {
		return nil, fmt.Errorf("watch segments: %w", err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}
