package app

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/cluster"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/live"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/recorder"
)

// startCluster puts the node's static and synthetic cameras in the NATS
// registry (sealed there for whichever node records them; see
// recorder.Recorder.Register) and joins the cluster, which tells the
// recorder which cameras to record as this node takes and releases their
// leases.
func (a *App) startCluster(ctx context.Context) error {
	for _, c := range a.static {
		if err := a.rec.Register(ctx, c); err != nil {
			return err
		}
	}
	a.node = cluster.New(cluster.Config{
		NodeID:     a.cfg.NodeID,
		LiveURL:    a.URL(),
		Cameras:    a.bus.Bucket(bus.BucketCameras),
		Nodes:      a.bus.Bucket(bus.BucketNodes),
		Assign:     a.bus.Bucket(bus.BucketAssign),
		Connected:  a.bus.Conn().IsConnected,
		MaxCameras: func() int { return a.capacity().Cameras },
		Owners:     a.rec,
		Load:       func() int { return len(a.rec.Cameras()) },
		OnUnplaced: a.unplaced(),
		// A partition's double recording, counted once it ends.
		OnDuplicate: metrics.NewDuplicateRecording(a.reg),
		Log:         a.log.With(zap.String("component", "cluster")),
	})
	if a.rtmp != nil {
		// Push cameras come to whichever node their publisher reaches, so
		// a cluster node listens for them from the start.
		if err := a.rtmp.Listen(); err != nil {
			return &ListenError{Key: "rtmp.addr", Value: a.cfg.RTMP.Addr, Err: err}
		}
	}
	return a.node.Start(ctx)
}

// unplaced returns the cluster's OnUnplaced hook: the cameras that no
// node has room for, and that this node would record, are counted in
// vigia_cluster_unplaced_cameras and get their status from the recorder.
func (a *App) unplaced() func(ids []string) {
	g := metrics.NewCluster(a.reg).Unplaced
	return func(ids []string) {
		g.Set(float64(len(ids)))
		a.rec.Unplaced(ids)
	}
}

// natsEnds keeps the last segment ends in bus.BucketSegmentEnds.
type natsEnds struct {
	bus  *bus.Bus
	node string
}

var _ recorder.EndStore = natsEnds{}

func (e natsEnds) GetEnd(ctx context.Context, id string) (time.Time, bool, error) {
	se, ok, err := e.bus.GetSegmentEnd(ctx, id)
	if err != nil || !ok {
		return time.Time{}, false, err
	}
	return time.UnixMilli(se.EndMs), true, nil
}

func (e natsEnds) PutEnd(ctx context.Context, id string, end time.Time) error {
	return e.bus.PutSegmentEnd(ctx, id, bus.SegmentEnd{EndMs: end.UnixMilli(), Node: e.node})
}

// LiveURL returns the signed live playlist URL of camera on this node,
// valid until exp.
func (a *App) LiveURL(camera string, exp time.Time) string {
	return live.URL(a.URL(), a.keys, camera, exp)
}

// WHEPURL returns the signed WebRTC (WHEP) address of camera on this
// node, valid until exp.
func (a *App) WHEPURL(camera string, exp time.Time) string {
	return live.WHEPURL(a.URL(), a.keys, camera, exp)
}

// RecordCamera records c on this node, outside the cluster (a node without
// Mode.Cluster, the bench, tests); c.Trusted says whether it may reach
// private addresses.
func (a *App) RecordCamera(c ingest.Camera) error { return a.rec.RecordStatic(c) }

// LeaseHolder returns the node that holds camera id's lease, "" when no
// node does or the lease cannot be read: what `vigia cameras` shows, read
// without the subcommand knowing the lease's encoding.
func LeaseHolder(ctx context.Context, b *bus.Bus, id string) string {
	return cluster.Holder(ctx, b.Bucket(bus.BucketAssign), id)
}
