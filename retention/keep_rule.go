package retention

import (
	"context"
	"time"
)

// For returns the keep of one camera when k is the configured one
// (retention.event_keep_days and its rolls): the camera's own
// event_keep_days, days, when it has one (more than 0), else k.Days;
// nothing kept longer when neither is set. events returns the camera's
// event times.
func (k EventKeep) For(days int, events func(ctx context.Context, from, to time.Time) ([]time.Time, error)) EventKeep {
	if days <= 0 {
		days = k.Days
	}
	if days <= 0 {
		return EventKeep{}
	}
	return EventKeep{Days: days, PreRoll: k.PreRoll, PostRoll: k.PostRoll, Events: events}
}
