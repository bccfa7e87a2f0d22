package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/cluster"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/live"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/recorder"
	"github.com/vigia/vigia/status"
)

// startCluster puts the node's static and synthetic cameras in the NATS
// registry and joins the cluster, which tells the recorder which cameras to
// record as this node takes and releases their leases.
func (a *App) startCluster(ctx context.Context) error {
	for _, c := range a.static {
		if err := a.registerStatic(ctx, c); err != nil {
			return fmt.Errorf("camera %s: %w", c.ID, err)
		}
	}
	a.node = cluster.New(cluster.Config{
		NodeID:     a.cfg.NodeID,
		LiveURL:    a.URL(),
		Cameras:    cluster.NATSBucket(a.bus.KV(bus.BucketCameras)),
		Nodes:      cluster.NATSBucket(a.bus.KV(bus.BucketNodes)),
		Assign:     cluster.NATSBucket(a.bus.KV(bus.BucketAssign)),
		Connected:  a.bus.Conn().IsConnected,
		MaxCameras: func() int { return a.capacity().Cameras },
		Owners:     a.rec,
		Load:       func() int { return len(a.rec.Cameras()) },
		OnUnplaced: a.unplaced(),
		Log:        a.log.With(zap.String("component", "cluster")),
	})
	if a.rtmp != nil {
		// Push cameras come to whichever node their publisher reaches, so
		// a cluster node listens for them from the start.
		if err := a.rtmp.Listen(); err != nil {
			a.log.Warn("rtmp push server not listening", zap.Error(err))
		}
	}
	return a.node.Start(ctx)
}

// unplaced returns the cluster's OnUnplaced hook: the cameras that no
// node has room for, and that this node would record, are counted in
// vigia_cluster_unplaced_cameras and get an OFFLINE status saying why.
func (a *App) unplaced() func(ids []string) {
	g := metrics.NewCluster(a.reg).Unplaced
	return func(ids []string) {
		g.Set(float64(len(ids)))
		for _, id := range ids {
			a.publishStatus(status.Status{
				Camera: id, Code: status.Offline, Text: status.Offline.Text(), Node: a.cfg.NodeID,
				LastError: "no recorder node has room for this camera", Since: time.Now().UTC(),
			})
		}
	}
}

// staticRecord returns the registry record of a camera of the operator's
// configuration.
func (a *App) staticRecord(c ingest.Camera) (camera.Config, error) {
	sealed, err := camera.Seal(a.keys, c.URL)
	if err != nil {
		return camera.Config{}, err
	}
	rec := camera.Config{ID: c.ID, ConnectionType: camera.RTSP, SealedURL: sealed, Transport: c.Transport, Sound: c.Sound, Trusted: c.Trusted}
	for _, sc := range a.cfg.Cameras {
		if sc.ID == c.ID {
			rec.HistoryDays = sc.HistoryDays
		}
	}
	return rec, nil
}

// registerStatic writes a camera of the operator's configuration into the
// registry, unless the same record is there already (sealed under the
// current secret).
func (a *App) registerStatic(ctx context.Context, c ingest.Camera) error {
	rec, err := a.staticRecord(c)
	if err != nil {
		return err
	}
	kv := a.bus.KV(bus.BucketCameras)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if e, err := kv.Get(ctx, c.ID); err == nil {
		var old camera.Config
		if json.Unmarshal(e.Value(), &old) == nil {
			if url, err := camera.Open(a.keys, old.SealedURL); err == nil && url == c.URL && !camera.Stale(a.keys, old.SealedURL) {
				old.SealedURL = rec.SealedURL
				if old == rec {
					return nil
				}
			}
		}
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = kv.Put(ctx, c.ID, b)
	return err
}

// resolveCamera turns a camera's record into what the recorder records.
func (a *App) resolveCamera(c camera.Config) (ingest.Camera, error) {
	spec := ingest.Camera{ID: c.ID, Transport: c.Transport, Sound: c.Sound, Trusted: c.Trusted, PlanWidth: c.Width, PlanHeight: c.Height}
	if u, ok, err := a.pushOrP2PURL(c); ok {
		if err != nil {
			return spec, ingest.Permanent(ingest.ReasonBadURL, err)
		}
		spec.URL, spec.Transport = u, ""
		return spec, nil
	}
	switch c.ConnectionType {
	case camera.RTSP, camera.RTMP:
		url, err := camera.Open(a.keys, c.SealedURL)
		if err != nil {
			return spec, ingest.Permanent(ingest.ReasonBadURL, fmt.Errorf("camera %s: source url: %w", c.ID, err))
		}
		if url == "" {
			return spec, ingest.Permanent(ingest.ReasonBadURL, fmt.Errorf("camera %s has no source url", c.ID))
		}
		if url, err = a.onvif.resolve(c, url); err != nil { // app/onvif.go
			return spec, err
		}
		spec.URL = url
		return spec, nil
	}
	return spec, ingest.Permanent(ingest.ReasonUnsupported, fmt.Errorf("camera %s: connection type %d is not recordable yet", c.ID, c.ConnectionType))
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
func (a *App) RecordCamera(c ingest.Camera) error {
	rec, err := a.staticRecord(c)
	if err != nil {
		return fmt.Errorf("camera %s: %w", c.ID, err)
	}
	a.rec.Record(rec, 0)
	return nil
}
