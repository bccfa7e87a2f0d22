package app

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/retention"
)

// startRetention starts the sweeper of the static cameras: every camera
// whose id is not an API id (camera.IsAPIID), from this node's
// configuration and from the registry (NATS KV "cameras"), so static
// cameras of other nodes are swept too. Every mode runs it; one node of the
// cluster sweeps at a time, through the lease retention.LeaseName.
func (a *App) startRetention() error {
	if !a.cfg.Retention.Enabled {
		return nil
	}
	sw, err := a.newSweeper(retention.LeaseName, "static", a.staticRetention)
	if err != nil {
		return err
	}
	a.retention = sw
	return nil
}

// startDBRetention starts, in a process with the database (serve, api),
// the sweeper of the API's cameras: every camera of the database, those of
// blocked clients included (the registry no longer lists them), with the
// history_days the database has at each sweep. One process with the
// database sweeps at a time, through the lease retention.DatabaseLeaseName.
func (a *App) startDBRetention(d *db.DB) error {
	if !a.cfg.Retention.Enabled {
		return nil
	}
	a.integrity.holdsDB = d
	sw, err := a.newSweeper(retention.DatabaseLeaseName, "database", func(ctx context.Context) ([]retention.CameraRetention, error) {
		var out []retention.CameraRetention
		err := d.AllCameras(ctx, func(c db.Camera, _ bool) error {
			out = append(out, retention.CameraRetention{Camera: strconv.FormatInt(c.ID, 10), Days: c.HistoryDays, Client: strconv.FormatInt(c.ClientID, 10)})
			return nil
		})
		return out, err
	})
	if err != nil {
		return err
	}
	a.api.retention = sw
	return nil
}

// newSweeper starts a sweeper of the cameras cams lists, under lease.
func (a *App) newSweeper(lease, cameras string, cams func(context.Context) ([]retention.CameraRetention, error)) (*retention.Sweeper, error) {
	poll := retention.DefaultPoll
	sw, err := retention.New(retention.Config{
		Store:        a.store,
		Cameras:      a.withQuotas(cams),
		Registerer:   a.reg,
		Node:         a.cfg.NodeID,
		Holds:        a.legalHolds(cameras),
		Lease:        a.bus.NewLease(lease, a.cfg.NodeID, retention.LeaseTTL(poll), nil),
		Interval:     time.Duration(a.cfg.Retention.SweepInterval),
		Poll:         poll,
		Lifecycle:    a.cfg.Retention.Lifecycle,
		VideosMaxAge: time.Duration(a.cfg.Export.MaxAge),
		Log:          a.log.With(zap.String("component", "retention"), zap.String("cameras", cameras)),
	})
	if err != nil {
		return nil, err
	}
	sw.Start()
	return sw, nil
}

// staticRetention lists the static cameras of the config file, then the
// registry's cameras that are neither those nor API cameras (static and
// synthetic cameras of other nodes). API cameras are the database
// sweeper's (startDBRetention).
func (a *App) staticRetention(ctx context.Context) ([]retention.CameraRetention, error) {
	seen := map[string]bool{}
	var out []retention.CameraRetention
	for _, c := range a.cfg.Cameras {
		seen[c.ID] = true
		out = append(out, retention.CameraRetention{Camera: c.ID, Days: c.HistoryDays})
	}
	reg, err := a.bus.ListCameras(ctx)
	for _, c := range reg {
		if !seen[c.ID] && !camera.IsAPIID(c.ID) {
			out = append(out, retention.CameraRetention{Camera: c.ID, Days: c.HistoryDays})
		}
	}
	return out, err
}

// retentionDays returns the camera's history_days for the object tag that
// lifecycle rules match, or 0 when unknown (the sweeper still expires it).
func (a *App) retentionDays(ctx context.Context, camera string) int {
	if a.rec != nil {
		if c, ok := a.rec.Camera(camera); ok {
			return c.HistoryDays // the record in effect, edits included
		}
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

// SweepRetention sweeps once now with each sweeper this process runs (the
// static cameras', and the database's in a process with the database)
// whose lease it holds or can take; swept counts those that swept.
func (a *App) SweepRetention(ctx context.Context) (r retention.Report, swept int, err error) {
	sweepers := []*retention.Sweeper{a.retention}
	if a.api != nil {
		sweepers = append(sweepers, a.api.retention)
	}
	var errs []error
	for _, sw := range sweepers {
		if sw == nil {
			continue
		}
		rep, ok, err := sw.RunOnce(ctx)
		if ok {
			swept++
			r.Cameras, r.Prefixes, r.Objects = r.Cameras+rep.Cameras, r.Prefixes+rep.Prefixes, r.Objects+rep.Objects
		}
		errs = append(errs, err)
	}
	return r, swept, errors.Join(errs...)
}

// closeRetention stops the sweeper.
func (a *App) closeRetention() {
	if a.retention != nil {
		a.retention.Close()
	}
}
