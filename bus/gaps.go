package bus

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigia/vigia/status"
)

// PublishGap publishes gap record g on GapSubject(g.Camera) in StreamGaps,
// with key (its storage key, storage.GapKey) as message id. It fails fast
// with ErrNotConnected while NATS is unreachable and otherwise returns by
// ctx's deadline (5 seconds without one).
func (b *Bus) PublishGap(ctx context.Context, g status.Gap, key string) error {
	data, err := marshalGap(g, key)
	if err != nil {
		return err
	}
	if err := b.usable(); err != nil {
		return fmt.Errorf("publish gap %s: %w", key, err)
	}
	if _, err := b.js.Publish(ctx, GapSubject(g.Camera), data, jetstream.WithMsgID(key)); err != nil {
		return fmt.Errorf("publish gap %s: %w", key, err)
	}
	return nil
}

// marshalGap validates g and returns its JSON.
func marshalGap(g status.Gap, key string) ([]byte, error) {
	if err := validCamera(g.Camera); err != nil {
		return nil, fmt.Errorf("publish gap: %w", err)
	}
	if key == "" || !g.Cause.Known() || g.StartMs <= 0 || (g.EndMs != 0 && g.EndMs < g.StartMs) {
		return nil, fmt.Errorf("publish gap %q: %w: %+v", key, ErrInvalidMessage, g)
	}
	data, err := json.Marshal(g)
	if err != nil {
		return nil, fmt.Errorf("publish gap %s: encode: %w", key, err)
	}
	return data, nil
}
