package bus

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// eventsRestart is the pause before KeepConsumingEvents starts
// ConsumeEvents again after it failed.
const eventsRestart = 2 * time.Second

// KeepConsumingEvents runs ConsumeEvents until ctx ends, starting it again
// eventsRestart after each failure (NATS unreachable, the consumer
// removed), which it logs; it blocks.
func (b *Bus) KeepConsumingEvents(ctx context.Context, durable string, fn func(context.Context, Event) error) {
	keepRunning(ctx, eventsRestart, func(ctx context.Context) error { return b.ConsumeEvents(ctx, durable, fn) }, b.log)
}

// keepRunning runs run until ctx ends, again pause after each time it
// returns an error while ctx is alive.
func keepRunning(ctx context.Context, pause time.Duration, run func(context.Context) error, log *zap.Logger) {
	for ctx.Err() == nil {
		err := run(ctx)
		if err == nil || ctx.Err() != nil {
			continue
		}
		log.Warn("events consumer stopped; restarting", zap.Error(err), zap.Duration("after", pause))
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}
