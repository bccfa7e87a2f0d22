package recorder

import (
	"context"
	"fmt"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/ingest"
)

// registerTimeout bounds the registration of one static camera.
const registerTimeout = 5 * time.Second

// Records reads the cameras' registry: NATS KV "cameras" in production.
type Records interface {
	// GetCamera returns camera id's record; ok is false when there is
	// none.
	GetCamera(ctx context.Context, id string) (c camera.Config, ok bool, err error)

	// ListCameras returns every record.
	ListCameras(ctx context.Context) ([]camera.Config, error)
}

// Registry reads and writes the cameras' registry.
type Registry interface {
	Records

	// PutCamera writes c's record under c.ID.
	PutCamera(ctx context.Context, c camera.Config) error
}

// Configured returns the cameras of the operator's configuration as the
// recorder takes them (RecordStatic, Register): trusted, as the operator's
// own cameras may reach private addresses, and with sound when sound is 1.
func Configured(cams []config.Camera) []ingest.Camera {
	out := make([]ingest.Camera, 0, len(cams))
	for _, c := range cams {
		out = append(out, ingest.Camera{ID: c.ID, URL: c.URL, Transport: c.Transport, Sound: c.Sound == 1, Trusted: true})
	}
	return out
}

// staticRecord returns the record of a camera of the operator's
// configuration (or a synthetic camera): its URL sealed with Config.Keys,
// its history_days from Config.Retention.
//
// The URL is sealed because the record is all another node gets: on a
// cluster the camera goes to whichever alive node with room wins it, and
// when its node stops, fills up or leaves, another takes its lease with
// nothing but this record from the registry, whose payloads never carry a
// camera password. The node whose configuration holds the camera records
// it from the same record, opened by resolve as every camera's is, not from
// its configuration: one record decides what every node records (URL,
// transport, sound, history_days), so a camera records alike wherever it
// lands and a lease that moves changes nothing. Without a cluster
// (RecordStatic) the sealed record never leaves the process; it is sealed
// only because an owner holds camera records, never plain URLs. Either way
// it costs one AES-GCM seal and open per start.
func (r *Recorder) staticRecord(c ingest.Camera) (camera.Config, error) {
	sealed, err := camera.Seal(r.cfg.Keys, c.URL)
	if err != nil {
		return camera.Config{}, fmt.Errorf("camera %s: %w", c.ID, err)
	}
	return camera.Config{
		ID: c.ID, ConnectionType: camera.RTSP, SealedURL: sealed, Transport: c.Transport, Sound: c.Sound, Trusted: c.Trusted,
		HistoryDays: r.cfg.Retention.static(c.ID),
	}, nil
}

// RecordStatic records c on this node, outside the cluster (a node without
// a cluster, the bench, tests); c.Trusted says whether it may reach private
// addresses.
func (r *Recorder) RecordStatic(c ingest.Camera) error {
	rec, err := r.staticRecord(c)
	if err != nil {
		return err
	}
	r.Record(rec, 0)
	return nil
}

// Register writes c, a camera of the operator's configuration, into
// Config.Registry for the cluster to place, unless the same record is
// there already (sealed under the current secret).
func (r *Recorder) Register(ctx context.Context, c ingest.Camera) error {
	rec, err := r.staticRecord(c)
	if err != nil {
		return err
	}
	reg := r.cfg.Registry
	if reg == nil {
		return fmt.Errorf("camera %s: no registry", c.ID)
	}
	ctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	if old, ok, err := reg.GetCamera(ctx, c.ID); err == nil && ok {
		if url, err := camera.Open(r.cfg.Keys, old.SealedURL); err == nil && url == c.URL && !camera.Stale(r.cfg.Keys, old.SealedURL) {
			old.SealedURL = rec.SealedURL
			if old == rec {
				return nil
			}
		}
	}
	if err := reg.PutCamera(ctx, rec); err != nil {
		return fmt.Errorf("camera %s: %w", c.ID, err)
	}
	return nil
}
