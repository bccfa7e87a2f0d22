package retention

import (
	"context"
	"testing"
	"time"
)

// A camera's own event_keep_days overrides retention.event_keep_days.
func TestEventKeepFor(t *testing.T) {
	events := func(context.Context, time.Time, time.Time) ([]time.Time, error) { return nil, nil }
	for _, tc := range []struct {
		name           string
		config, camera int
		want           int
	}{
		{"off", 0, 0, 0},
		{"configured", 10, 0, 10},
		{"camera's own", 10, 30, 30},
		{"camera's own alone", 0, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := EventKeep{Days: tc.config, PreRoll: time.Second, PostRoll: 2 * time.Second}
			k := def.For(tc.camera, events)
			if k.Days != tc.want || (k.Events != nil) != (tc.want > 0) {
				t.Fatalf("keep %d days (events %v), want %d", k.Days, k.Events != nil, tc.want)
			}
			if tc.want > 0 && (k.PreRoll != def.PreRoll || k.PostRoll != def.PostRoll) {
				t.Fatalf("rolls %v/%v, want %v/%v", k.PreRoll, k.PostRoll, def.PreRoll, def.PostRoll)
			}
		})
	}
}
