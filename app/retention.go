package app

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/retention"
)

// startRetention starts the retention sweeper (one owner in the cluster,
// through the lease in NATS KV "leases").
func (a *App) startRetention() error {
	if !a.cfg.Retention.Enabled {
		return nil
	}
	poll := retention.DefaultPoll
	sw, err := retention.New(retention.Config{
		Store:        a.store,
		Cameras:      a.retentionCameras,
		Lease:        a.bus.NewLease(retention.LeaseName, a.cfg.NodeID, retention.LeaseTTL(poll), nil),
		Interval:     time.Duration(a.cfg.Retention.SweepInterval),
		Poll:         poll,
		Lifecycle:    a.cfg.Retention.Lifecycle,
		VideosMaxAge: time.Duration(a.cfg.Export.MaxAge),
		Log:          a.log.With(zap.String("component", "retention")),
	})
	if err != nil {
		return err
	}
	sw.Start()
	a.retention = sw
	return nil
}

// retentionCameras lists the static cameras of the config file, then the
// cameras of the registry (NATS KV "cameras") that are not static.
func (a *App) retentionCameras(ctx context.Context) ([]retention.CameraRetention, error) {
	seen := map[string]bool{}
	var out []retention.CameraRetention
	for _, c := range a.cfg.Cameras {
		seen[c.ID] = true
		out = append(out, retention.CameraRetention{Camera: c.ID, Days: c.HistoryDays})
	}
	reg, err := a.bus.ListCameras(ctx)
	for _, c := range reg {
		if !seen[c.ID] {
			out = append(out, retention.CameraRetention{Camera: c.ID, Days: c.HistoryDays})
		}
	}
	return out, err
}

// retentionDays returns the camera's history_days for the object tag that
// lifecycle rules match, or 0 when unknown (the sweeper still expires it).
func (a *App) retentionDays(ctx context.Context, camera string) int {
	if c, ok := a.rec.Camera(camera); ok {
		return c.HistoryDays // the record in effect, edits included
	}
	for _, c := range a.cfg.Cameras {
		if c.ID == camera {
			return c.HistoryDays
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, ok, err := a.bus.GetCamera(ctx, camera)
	if err != nil || !ok {
		return 0
	}
	return c.HistoryDays
}

// closeRetention stops the sweeper.
func (a *App) closeRetention() {
	if a.retention != nil {
		a.retention.Close()
	}
}
