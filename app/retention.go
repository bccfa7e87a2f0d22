package app

import (
	"context"
	"errors"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/cluster"
	"github.com/vigia/vigia/recorder"
	"github.com/vigia/vigia/retention"
)

// startRetention starts the sweeper of the static cameras: every camera
// whose id is not an API id, from this node's configuration and from the
// registry (recorder.Retention.StaticCameras), so static cameras of other
// nodes are swept too. Every mode runs it; one node of the
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
// history_days and event keep (retention.EventKeep.For) the database has
// at each sweep. One process with the database sweeps at a time, through
// the lease retention.DatabaseLeaseName.
func (a *App) startDBRetention(d *db.DB) error {
	if !a.cfg.Retention.Enabled {
		return nil
	}
	a.integrity.holdsDB = d
	r := a.cfg.Retention
	def := retention.EventKeep{Days: r.EventKeepDays, PreRoll: time.Duration(r.EventPreRoll), PostRoll: time.Duration(r.EventPostRoll)}
	sw, err := a.newSweeper(retention.DatabaseLeaseName, "database", func(ctx context.Context) ([]retention.CameraRetention, error) {
		var out []retention.CameraRetention
		keep, err := d.EventKeepDays(ctx)
		if err != nil {
			return nil, err
		}
		err = d.AllCameras(ctx, func(c db.Camera, _ bool) error {
			events := func(ctx context.Context, from, to time.Time) ([]time.Time, error) {
				return d.EventTimes(ctx, c.ID, from, to)
			}
			out = append(out, retention.CameraRetention{Camera: strconv.FormatInt(c.ID, 10), Days: c.HistoryDays, Client: strconv.FormatInt(c.ClientID, 10), Keep: def.For(keep[c.ID], events)})
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
		Lease:        cluster.NewTaskLease(a.bus.Bucket(bus.BucketLeases), lease, a.cfg.NodeID, retention.LeaseTTL(poll), nil),
		Interval:     time.Duration(a.cfg.Retention.SweepInterval),
		Poll:         poll,
		Lifecycle:    a.cfg.Retention.Lifecycle,
		VideosMaxAge: 0, // no lifecycle rule on videos/: the API expires them, reading the legal holds
		Log:          a.log.With(zap.String("component", "retention"), zap.String("cameras", cameras)),
	})
	if err != nil {
		return nil, err
	}
	sw.Start()
	return sw, nil
}

// staticRetention lists the cameras of the static sweeper, as the
// retention rule names them (recorder.Retention.StaticCameras).
func (a *App) staticRetention(ctx context.Context) ([]retention.CameraRetention, error) {
	var out []retention.CameraRetention
	err := a.days.StaticCameras(ctx, func(id string, days int) {
		out = append(out, retention.CameraRetention{Camera: id, Days: days})
	})
	return out, err
}

// retentionRule builds the rule for the history_days in effect for a
// camera (recorder.Retention): the configured cameras', and the
// registry's.
func (a *App) retentionRule() *recorder.Retention {
	static := map[string]int{}
	for _, c := range a.cfg.Cameras {
		static[c.ID] = c.HistoryDays
	}
	return &recorder.Retention{Static: static, Records: a.bus}
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
			r.Add(rep)
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
