package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// Topology limits.
const (
	// NodeTTL is how long a node heartbeat in BucketNodes lives without renewal.
	NodeTTL = 6 * time.Second
	// CamerasHistory is how many revisions of each camera configuration are kept.
	CamerasHistory = 5
	// DuplicateWindow is how long streams remember Nats-Msg-Id values to drop
	// duplicate publishes.
	DuplicateWindow = 2 * time.Minute
	// SegmentsMaxAge is how long segment notices are kept in StreamSegments.
	SegmentsMaxAge = 7 * 24 * time.Hour
	// EventsMaxAge is how long events are kept in StreamEvents.
	EventsMaxAge = 30 * 24 * time.Hour
	// GapsMaxAge is how long gap records are kept in StreamGaps (storage
	// keeps them as long as the segments).
	GapsMaxAge = 7 * 24 * time.Hour
)

// kvConfigs returns the bucket configurations with the given replicas.
// BucketAssign has no bucket TTL: a lease carries its own expiry in its value.
func kvConfigs(replicas int) []jetstream.KeyValueConfig {
	return []jetstream.KeyValueConfig{
		{Bucket: BucketCameras, Description: "camera configuration by camera id", History: CamerasHistory, Storage: jetstream.FileStorage, Replicas: replicas},
		{Bucket: BucketCameraStatus, Description: "last status by camera id", History: 1, Storage: jetstream.FileStorage, Replicas: replicas},
		{Bucket: BucketNodes, Description: "recorder node heartbeats", History: 1, TTL: NodeTTL, Storage: jetstream.FileStorage, Replicas: replicas},
		{Bucket: BucketAssign, Description: "camera to node leases", History: 1, Storage: jetstream.FileStorage, Replicas: replicas},
		{Bucket: BucketExports, Description: "export job state by job id", History: 1, Storage: jetstream.FileStorage, Replicas: replicas},
		{Bucket: BucketLeases, Description: "cluster singleton leases by name", History: 1, Storage: jetstream.FileStorage, Replicas: replicas},
		{Bucket: BucketCluster, Description: "facts every node must agree on (the secret's fingerprint)", History: 1, Storage: jetstream.FileStorage, Replicas: replicas},
		{Bucket: BucketSegmentEnds, Description: "end of each stopped camera's last segment", History: 1, TTL: SegmentEndsTTL, Storage: jetstream.FileStorage, Replicas: replicas},
	}
}

// streamConfigs returns the stream configurations with the given replicas.
func streamConfigs(replicas int) []jetstream.StreamConfig {
	return []jetstream.StreamConfig{
		{
			Name:        StreamEvents,
			Description: "camera events",
			Subjects:    []string{SubjectEventsAll},
			Retention:   jetstream.LimitsPolicy,
			Storage:     jetstream.FileStorage,
			MaxAge:      EventsMaxAge,
			Duplicates:  DuplicateWindow,
			Replicas:    replicas,
		},
		{
			Name:        StreamSegments,
			Description: "stored segment notices",
			Subjects:    []string{SubjectSegmentsAll},
			Retention:   jetstream.LimitsPolicy,
			Storage:     jetstream.FileStorage,
			MaxAge:      SegmentsMaxAge,
			Duplicates:  DuplicateWindow,
			Replicas:    replicas,
		},
		{
			Name:        StreamGaps,
			Description: "gap records: why a camera's recording stopped or skipped",
			Subjects:    []string{SubjectGapsAll},
			Retention:   jetstream.LimitsPolicy,
			Storage:     jetstream.FileStorage,
			MaxAge:      GapsMaxAge,
			Duplicates:  DuplicateWindow,
			Replicas:    replicas,
		},
		{
			Name:        StreamJobs,
			Description: "export job work queue",
			Subjects:    []string{SubjectJobsExport},
			Retention:   jetstream.WorkQueuePolicy,
			Storage:     jetstream.FileStorage,
			Duplicates:  DuplicateWindow,
			Replicas:    replicas,
		},
	}
}

// EnsureTopology creates or updates the key-value buckets and streams of
// docs/nats.md and opens the buckets for KV. It is idempotent and succeeds
// against a server that already has them. Each is made with Options.Replicas
// copies, but never fewer than it already has: a node configured with fewer
// replicas than the cluster (an old config, an operator's R3 made by hand)
// leaves them as they are, and a node configured with more raises them
// (logged).
func (b *Bus) EnsureTopology(ctx context.Context) error {
	if err := b.usable(); err != nil {
		return fmt.Errorf("%w: %w", ErrTopology, err)
	}
	kvs := make(map[string]jetstream.KeyValue)
	for _, cfg := range kvConfigs(b.opts.Replicas) {
		var kv jetstream.KeyValue
		err := attempts(ctx, func(ctx context.Context) error {
			r, err := b.replicasFor(ctx, "bucket", cfg.Bucket, kvStreamPrefix+cfg.Bucket, cfg.Replicas)
			if err != nil {
				return err
			}
			c := cfg
			c.Replicas = r
			kv, err = b.js.CreateOrUpdateKeyValue(ctx, c)
			return err
		})
		if err != nil {
			return fmt.Errorf("%w: bucket %s: %w", ErrTopology, cfg.Bucket, err)
		}
		kvs[cfg.Bucket] = kv
	}
	for _, cfg := range streamConfigs(b.opts.Replicas) {
		err := attempts(ctx, func(ctx context.Context) error {
			r, err := b.replicasFor(ctx, "stream", cfg.Name, cfg.Name, cfg.Replicas)
			if err != nil {
				return err
			}
			c := cfg
			c.Replicas = r
			_, err = b.js.CreateOrUpdateStream(ctx, c)
			return err
		})
		if err != nil {
			return fmt.Errorf("%w: stream %s: %w", ErrTopology, cfg.Name, err)
		}
	}
	b.mu.Lock()
	b.kvs = kvs
	b.mu.Unlock()
	return nil
}

// topologyAttempt bounds one attempt of a topology request. A request
// sent while a new JetStream cluster settles its routes can go unanswered;
// it is sent again rather than waited on until the caller's deadline.
const topologyAttempt = 5 * time.Second

// attempts runs f with topologyAttempt per attempt until it returns
// anything but an attempt's time-out, or ctx ends.
func attempts(ctx context.Context, f func(ctx context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, topologyAttempt)
		err := f(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)) {
			return err
		}
	}
}

// kvStreamPrefix starts the name of the stream behind a key-value bucket.
const kvStreamPrefix = "KV_"

// replicasFor returns the replicas to give the stream named stream (a
// bucket's or a stream's, called name in logs): want, or what it has when
// that is more. A stream that does not exist yet gets want; one whose
// information cannot be read is an error, never a reason to lower it.
func (b *Bus) replicasFor(ctx context.Context, kind, name, stream string, want int) (int, error) {
	info, err := b.js.Stream(ctx, stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return want, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read replicas: %w", err)
	}
	have := info.CachedInfo().Config.Replicas
	switch {
	case have > want:
		b.log.Info("keeping the replicas of an existing "+kind+": nats.replicas is lower and replicas are never lowered",
			zap.String(kind, name), zap.Int("replicas", have), zap.Int("nats_replicas", want))
		return have, nil
	case have < want:
		b.log.Info("raising the replicas of an existing "+kind,
			zap.String(kind, name), zap.Int("from", have), zap.Int("to", want))
	}
	return want, nil
}
