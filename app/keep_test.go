package app

import (
	"testing"

	"github.com/vigia/vigia/config"
)

// A camera's own event_keep_days overrides retention.event_keep_days.
func TestEventKeepDays(t *testing.T) {
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
			a := &App{cfg: &config.Config{}}
			a.cfg.Retention.EventKeepDays = tc.config
			k := a.eventKeep(nil, 1, tc.camera)
			if k.Days != tc.want || (k.Events != nil) != (tc.want > 0) {
				t.Fatalf("keep %d days (events %v), want %d", k.Days, k.Events != nil, tc.want)
			}
		})
	}
}
