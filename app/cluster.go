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
)

// startCluster puts the node's static and synthetic cameras in the NATS
// registry and joins the cluster, which starts and stops cameras on the
// recorder as this node takes and releases their leases.
func (a *App) startCluster(ctx context.Context) error {
	for _, c := range a.static {
		if err := a.registerStatic(ctx, c); err != nil {
			return fmt.Errorf("camera %s: %w", c.ID, err)
		}
	}
	a.node = cluster.New(cluster.Config{
		NodeID:  a.cfg.NodeID,
		LiveURL: a.URL(),
		Bus:     a.bus,
		Start:   a.startCamera,
		Stop:    a.stopCamera,
		Load:    func() int { return len(a.rec.Cameras()) },
		Log:     a.log.With(zap.String("component", "cluster")),
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

// registerStatic writes a camera of the operator's configuration into the
// registry, unless the same record is there already.
func (a *App) registerStatic(ctx context.Context, c ingest.Camera) error {
	sealed, err := camera.Seal(a.secret, c.URL)
	if err != nil {
		return err
	}
	rec := camera.Config{ID: c.ID, ConnectionType: camera.RTSP, SealedURL: sealed, Transport: c.Transport, Sound: c.Sound, Trusted: true}
	for _, sc := range a.cfg.Cameras {
		if sc.ID == c.ID {
			rec.HistoryDays = sc.HistoryDays
		}
	}
	kv := a.bus.KV(bus.BucketCameras)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if e, err := kv.Get(ctx, c.ID); err == nil {
		var old camera.Config
		if json.Unmarshal(e.Value(), &old) == nil {
			if url, err := camera.Open(a.secret, old.SealedURL); err == nil && url == c.URL {
				old.SealedURL = sealed
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

// endTimeout bounds the read and the write of a camera's last segment end
// in BucketSegmentEnds; startCamera runs in the cluster loop.
const endTimeout = 500 * time.Millisecond

// stopCamera stops a camera this node releases or loses, then stores the
// end of its last segment, before the lease goes, for the node that records
// it next (docs/cluster.md, Handover).
func (a *App) stopCamera(id string) {
	a.rec.Remove(id)
	end := a.rec.LastEnd(id)
	if end.IsZero() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	if err := a.bus.PutSegmentEnd(ctx, id, bus.SegmentEnd{EndMs: end.UnixMilli(), Node: a.cfg.NodeID}); err != nil {
		a.log.Warn("last segment end not stored", zap.String("camera", id), zap.Error(err))
	}
}

// maxEndAhead is how far ahead of this node's clock another node's last
// segment end may lie. A late anchor puts it a few seconds ahead at most;
// more is a clock out of step, and following it would shift this node's
// recording of the camera by as much.
const maxEndAhead = 10 * time.Second

// noteEnd reads the end of camera id's last segment on the node that held
// it before, so that this node starts no segment before it.
func (a *App) noteEnd(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	e, ok, err := a.bus.GetSegmentEnd(ctx, id)
	if err != nil {
		a.log.Warn("last segment end not read", zap.String("camera", id), zap.Error(err))
		return
	}
	if !ok {
		return
	}
	end := time.UnixMilli(e.EndMs)
	if ahead := time.Until(end); ahead > maxEndAhead {
		a.log.Warn("last segment end ignored: too far ahead of this node's clock",
			zap.String("camera", id), zap.String("from_node", e.Node), zap.Duration("ahead", ahead))
		return
	}
	a.rec.NoteEnd(id, end)
}

// startCamera records a camera whose lease this node took.
func (a *App) startCamera(c camera.Config) error {
	a.noteEnd(c.ID)
	if u, ok, err := a.pushOrP2PURL(c); ok {
		if err != nil {
			return err
		}
		return a.rec.Add(ingest.Camera{ID: c.ID, URL: u, Sound: c.Sound, Trusted: c.Trusted, PlanWidth: c.Width, PlanHeight: c.Height})
	}
	switch c.ConnectionType {
	case camera.RTSP, camera.RTMP:
		url, err := camera.Open(a.secret, c.SealedURL)
		if err != nil {
			return err
		}
		if url == "" {
			return fmt.Errorf("camera %s has no source url", c.ID)
		}
		return a.rec.Add(ingest.Camera{
			ID: c.ID, URL: url, Transport: c.Transport, Sound: c.Sound, Trusted: c.Trusted,
			PlanWidth: c.Width, PlanHeight: c.Height,
		})
	}
	return fmt.Errorf("camera %s: connection type %d is not recordable yet", c.ID, c.ConnectionType)
}

// LiveURL returns the signed live playlist URL of camera on this node,
// valid until exp.
func (a *App) LiveURL(camera string, exp time.Time) string {
	return live.URL(a.URL(), a.secret, camera, exp)
}
