package app

import (
	"context"
	"time"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/retention"
)

// eventKeep is the keep of the recordings around the events of API camera
// id: the camera's event_keep_days when set (days), else
// retention.event_keep_days; its events read from the database.
func (a *App) eventKeep(d *db.DB, id int64, days int) retention.EventKeep {
	r := a.cfg.Retention
	if days <= 0 {
		days = r.EventKeepDays
	}
	if days <= 0 {
		return retention.EventKeep{}
	}
	return retention.EventKeep{Days: days, PreRoll: time.Duration(r.EventPreRoll), PostRoll: time.Duration(r.EventPostRoll),
		Events: func(ctx context.Context, from, to time.Time) ([]time.Time, error) {
			return d.EventTimes(ctx, id, from, to)
		}}
}
