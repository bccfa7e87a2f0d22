package export

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

// Defaults of ServiceConfig.
const (
	DefaultMaxConcurrent = 2
	DefaultAckWait       = 30 * time.Second
	DefaultMaxAttempts   = 3
	// progressEvery bounds how often a running job writes its progress.
	progressEvery = 500 * time.Millisecond
	// retryDelay is the wait before a job that failed for a transient
	// reason (storage unreachable) is delivered again.
	retryDelay = 10 * time.Second
	// A job whose state is not found is delivered again after
	// unseenDelay, up to unseenDeliveries times, before it is taken for
	// removed.
	unseenDelay      = time.Second
	unseenDeliveries = 4
	// expireEvery is the time between two passes over expired videos.
	expireEvery = time.Hour
)

// ServiceConfig configures a Service.
type ServiceConfig struct {
	// Bus carries the work queue and the job states. Required.
	Bus *bus.Bus
	// Store holds the recordings and receives the videos. Required.
	Store storage.Store
	// Catalogue finds the recordings in Store. It defaults to one with the
	// default longest segment.
	Catalogue *catalogue.Catalogue
	// Node names this node in job states.
	Node string
	// MaxConcurrent is the number of jobs this node runs at once. It
	// defaults to 2.
	MaxConcurrent int
	// MaxRange is the longest range accepted. It defaults to 24 hours.
	MaxRange time.Duration
	// MaxAttempts bounds the deliveries of a job that keeps failing for a
	// transient reason; then it fails with status 2. It defaults to 3.
	MaxAttempts int
	// AckWait is how long a job may go without a heartbeat before it is
	// delivered to another node (a node killed mid-job). A running job
	// heartbeats every AckWait/3. It defaults to 30 seconds.
	AckWait time.Duration
	// MaxAge, when positive, removes finished jobs (file and record) this
	// long after they finished. Zero keeps them until removed.
	MaxAge time.Duration
	// TempDir holds the temporary media files. It defaults to os.TempDir().
	TempDir string
	// Thumbnail, optional, encodes the clip's first keyframe as a JPEG.
	// Without it (no decoder in this build) no thumbnail is stored.
	Thumbnail func(ctx context.Context, kf *Keyframe) ([]byte, error)
	// SignKey, optional, signs each video's manifest (docs/export.md):
	// with it every video gets videos/{id}.manifest.json and its detached
	// signature videos/{id}.manifest.sig. Without it no manifest is made.
	SignKey ed25519.PrivateKey
	// H264, optional, returns the H.264 rendition of a recorded segment
	// (Options.H264), for jobs whose Codec is CodecH264. Without it (a
	// build that cannot transcode) such jobs of H.265 recordings fail
	// with ErrNoTranscoder.
	H264 func(segment []byte) ([]byte, error)
	// Log is the service's logger.
	Log *zap.Logger
}

// Service runs export jobs from the work queue: MaxConcurrent workers each
// take one job at a time, acknowledge it only when it is finished (done or
// failed for good), and heartbeat while it runs, so a job of a node that
// dies is delivered to another node after AckWait.
type Service struct {
	cfg  ServiceConfig
	jobs *Jobs
	cons *bus.JobConsumer

	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// Start creates the shared consumer and starts the workers.
func Start(ctx context.Context, cfg ServiceConfig) (*Service, error) {
	if cfg.Bus == nil || cfg.Store == nil {
		return nil, fmt.Errorf("%w: Bus and Store are required", ErrInvalidJob)
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.MaxRange <= 0 {
		cfg.MaxRange = DefaultMaxRange
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = DefaultAckWait
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	cons, err := cfg.Bus.ExportJobs(ctx, cfg.AckWait)
	if err != nil {
		return nil, err
	}
	s := &Service{cfg: cfg, jobs: NewJobs(cfg.Bus, cfg.Store, cfg.MaxRange), cons: cons}
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for range cfg.MaxConcurrent {
		s.wg.Add(1)
		go s.worker(runCtx)
	}
	if cfg.MaxAge > 0 {
		s.wg.Add(1)
		go s.expirer(runCtx)
	}
	return s, nil
}

// Jobs returns the job client on the same bus and store.
func (s *Service) Jobs() *Jobs { return s.jobs }

// Close stops taking jobs and waits for the workers. Running jobs stop and
// are handed back to the queue at once, for another node or the next start.
func (s *Service) Close() {
	s.once.Do(func() {
		s.cancel()
		s.wg.Wait()
	})
}

// worker takes one job at a time until ctx ends.
func (s *Service) worker(ctx context.Context) {
	defer s.wg.Done()
	for {
		msg, err := s.cons.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.cfg.Log.Warn("export queue", zap.Error(err))
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		s.handle(ctx, msg)
	}
}

// expirer removes finished jobs older than MaxAge.
func (s *Service) expirer(ctx context.Context) {
	defer s.wg.Done()
	for {
		if n, err := s.jobs.Expire(ctx, s.cfg.MaxAge, time.Now()); err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn("expiring videos", zap.Error(err))
		} else if n > 0 {
			s.cfg.Log.Info("expired videos removed", zap.Int("videos", n))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(expireEvery):
		}
	}
}

// handle runs one delivered job.
func (s *Service) handle(ctx context.Context, msg *bus.JobMsg) {
	job, err := DecodeJob(msg.Data())
	if err != nil {
		s.cfg.Log.Warn("export job dropped", zap.Error(err))
		_ = msg.Ack()
		return
	}
	log := s.cfg.Log.With(zap.Int64("job", job.ID), zap.String("camera", job.Camera))
	st, rev, err := getState(ctx, s.cfg.Bus, job.ID)
	switch {
	case errors.Is(err, ErrJobNotFound) && msg.Delivered() < unseenDeliveries:
		// The state is written before the job is queued, but a server
		// that has not caught up yet (a KV read may be answered by any
		// replica, as after a server restarted) may not have it: look
		// again shortly rather than drop the job.
		log.Info("export job's state not found yet; looking again", zap.Uint64("delivery", msg.Delivered()))
		_ = msg.Nak(unseenDelay)
		return
	case errors.Is(err, ErrJobNotFound):
		log.Info("export job removed before it ran")
		_ = msg.Ack()
		return
	case err != nil:
		log.Warn("export job state unreadable; retrying", zap.Error(err))
		_ = msg.Nak(retryDelay)
		return
	case st.Status != StatusMaking:
		_ = msg.Ack() // already finished (a delivery after the ack was lost)
		return
	}

	hbCtx, stopHB := context.WithCancel(ctx)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		t := time.NewTicker(s.cfg.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-hbCtx.Done():
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	defer func() { stopHB(); <-hbDone }()

	u := &updater{bus: s.cfg.Bus, st: st, rev: rev}
	u.st.Node, u.st.Progress, u.st.Reason = s.cfg.Node, 0, ""
	if err := u.put(ctx); err != nil {
		s.finishErr(ctx, msg, log, u, err)
		return
	}
	started := time.Now()
	err = s.run(ctx, job, u)
	if err == nil {
		log.Info("export job done", zap.Int64("bytes", u.st.Size), zap.Int64("duration_ms", u.st.DurationMs),
			zap.Duration("took", time.Since(started)))
		_ = msg.Ack()
		return
	}
	s.finishErr(ctx, msg, log, u, err)
}

// finishErr decides what a failed run leaves: handed back (node stopping,
// transient error) or failed for good (status 2, acknowledged).
func (s *Service) finishErr(ctx context.Context, msg *bus.JobMsg, log *zap.Logger, u *updater, err error) {
	switch {
	case errors.Is(err, ErrRemoved):
		log.Info("export job removed while it ran")
		_ = s.cfg.Store.Delete(context.WithoutCancel(ctx), []string{VideoKey(u.st.ID), ThumbKey(u.st.ID)})
		_ = msg.Ack()
		return
	case ctx.Err() != nil:
		log.Info("export job handed back: node stopping")
		_ = msg.Nak(0)
		return
	}
	permanent := errors.Is(err, ErrNoRecordings) || errors.Is(err, ErrRange) || errors.Is(err, ErrBadSegment) || errors.Is(err, ErrInvalidJob) ||
		errors.Is(err, ErrNoTranscoder)
	if !permanent && msg.Delivered() < uint64(s.cfg.MaxAttempts) {
		log.Warn("export job failed; retrying", zap.Error(err), zap.Uint64("delivery", msg.Delivered()))
		u.st.Reason = "retrying: " + err.Error()
		_ = u.put(ctx)
		_ = msg.Nak(retryDelay)
		return
	}
	log.Warn("export job failed", zap.Error(err))
	u.st.Status, u.st.Reason = StatusFailed, err.Error()
	if perr := u.put(ctx); perr != nil && !errors.Is(perr, ErrRemoved) {
		log.Warn("export job state not written; retrying", zap.Error(perr))
		_ = msg.Nak(retryDelay)
		return
	}
	_ = msg.Ack()
}

// run builds the clip, stores it with its thumbnail and marks the job done.
func (s *Service) run(ctx context.Context, job Job, u *updater) error {
	var last time.Time
	var perr error
	var h264 func([]byte) ([]byte, error)
	if job.Codec == CodecH264 {
		h264 = s.cfg.H264
		if h264 == nil {
			h264 = noTranscoder
		}
	}
	clip, err := Build(ctx, s.cfg.Store, job.Request(), Options{
		H264:      h264,
		MaxRange:  s.cfg.MaxRange,
		Catalogue: s.cfg.Catalogue,
		TempDir:   s.cfg.TempDir,
		Progress: func(done, total int64) {
			pct := int(90 * done / max(total, 1))
			if perr != nil || pct <= u.st.Progress || time.Since(last) < progressEvery {
				return
			}
			last = time.Now()
			u.st.Progress = pct
			perr = u.put(ctx)
		},
	})
	if err != nil {
		return err
	}
	defer clip.Close()
	if perr != nil {
		return perr
	}
	key := VideoKey(job.ID)
	if err := s.cfg.Store.Put(ctx, key, clip.Reader(), clip.Size(), storage.PutOptions{ContentType: "video/mp4"}); err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	u.st.ManifestKey = ""
	if s.cfg.SignKey != nil {
		if err := s.storeManifest(ctx, job, clip, key); err != nil {
			return err
		}
		u.st.ManifestKey = ManifestKey(job.ID)
	}
	u.st.ThumbKey = ""
	if s.cfg.Thumbnail != nil && clip.Keyframe != nil {
		if jpg, err := s.cfg.Thumbnail(ctx, clip.Keyframe); err != nil {
			s.cfg.Log.Warn("export thumbnail not made", zap.Int64("job", job.ID), zap.Error(err))
		} else if err := s.cfg.Store.Put(ctx, ThumbKey(job.ID), bytes.NewReader(jpg), int64(len(jpg)), storage.PutOptions{ContentType: "image/jpeg"}); err != nil {
			return fmt.Errorf("store thumbnail: %w", err)
		} else {
			u.st.ThumbKey = ThumbKey(job.ID)
		}
	}
	u.st.Status, u.st.Progress, u.st.Reason = StatusDone, 100, ""
	u.st.Key, u.st.Size = key, clip.Size()
	u.st.FileStartMs, u.st.DurationMs, u.st.Gaps = clip.Start.UnixMilli(), clip.Duration().Milliseconds(), len(clip.Gaps)
	return u.put(ctx)
}

// noTranscoder is the H.264 rendition of a node that cannot transcode:
// H.264 segments pass, H.265 ones fail the job.
func noTranscoder(seg []byte) ([]byte, error) {
	if videoIsH264(seg) {
		return nil, nil
	}
	return nil, ErrNoTranscoder
}

// updater writes a running job's state with compare-and-set, so a removal
// (the key deleted) is noticed.
type updater struct {
	bus *bus.Bus
	st  State
	rev uint64
}

func (u *updater) put(ctx context.Context) error {
	u.st.Updated = time.Now().UTC()
	data, err := json.Marshal(u.st)
	if err != nil {
		return fmt.Errorf("job %d state: %w", u.st.ID, err)
	}
	for attempt := 0; ; attempt++ {
		rev, err := u.bus.KVUpdate(ctx, bus.BucketExports, stateKey(u.st.ID), data, u.rev)
		if err == nil {
			u.rev = rev
			return nil
		}
		if !errors.Is(err, bus.ErrRevision) || attempt > 0 {
			return fmt.Errorf("job %d state: %w", u.st.ID, err)
		}
		// Changed elsewhere: removed, or written by another node that got
		// the job after this one's heartbeat lapsed. Take its revision once.
		_, rev, gerr := getState(ctx, u.bus, u.st.ID)
		if errors.Is(gerr, ErrJobNotFound) {
			return fmt.Errorf("%w: %d", ErrRemoved, u.st.ID)
		}
		if gerr != nil {
			return gerr
		}
		u.rev = rev
	}
}

// storeManifest stores the signed manifest of job's clip, stored at key:
// the signature first, so a manifest is never without it.
func (s *Service) storeManifest(ctx context.Context, job Job, clip *Clip, key string) error {
	m, err := NewManifest(ctx, s.cfg.Store, s.cfg.Catalogue, key, job.Request(), clip, time.Now())
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	body, sig := m.Sign(s.cfg.SignKey, sign.KeyID(s.cfg.SignKey.Public().(ed25519.PublicKey)))
	if err := s.cfg.Store.Put(ctx, SignatureKey(job.ID), bytes.NewReader(sig), int64(len(sig)), storage.PutOptions{ContentType: "application/octet-stream"}); err != nil {
		return fmt.Errorf("store manifest signature: %w", err)
	}
	if err := s.cfg.Store.Put(ctx, ManifestKey(job.ID), bytes.NewReader(body), int64(len(body)), storage.PutOptions{ContentType: "application/json"}); err != nil {
		return fmt.Errorf("store manifest: %w", err)
	}
	return nil
}
