package retention

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/vigia/vigia/storage"
)

// Defaults of Config.
const (
	// DefaultInterval is the time between two sweeps of the owner node.
	DefaultInterval = time.Hour
	// DefaultPoll is how often a node takes or renews the lease.
	DefaultPoll = time.Minute
	// LeaseName is the name of the lease of the static cameras' sweeper,
	// which every node runs.
	LeaseName = "retention-sweeper"
	// DatabaseLeaseName is the name of the lease of the sweeper of the
	// API's cameras, which the processes with the database run.
	DatabaseLeaseName = "retention-sweeper-db"
)

// LeaseTTL returns the lease lifetime that fits a poll interval: three
// polls, so an owner that misses one renewal keeps the lease.
func LeaseTTL(poll time.Duration) time.Duration {
	if poll <= 0 {
		poll = DefaultPoll
	}
	return 3 * poll
}

// CameraRetention is one camera's retention.
type CameraRetention struct {
	// Camera is the camera id.
	Camera string
	// Days is the camera's history_days. Zero or less keeps its objects.
	Days int
	// QuotaBytes is the most bytes the camera's recordings (its rec/
	// objects) may take; past it each sweep deletes its oldest segments
	// (docs/retention.md). Zero or less: no quota.
	QuotaBytes int64
	// Client groups cameras under ClientQuotaBytes; empty: no client.
	Client string
	// ClientQuotaBytes is the most bytes the recordings of all the cameras
	// of Client may take together (the largest value given for the
	// client's cameras applies). Zero or less: no quota.
	ClientQuotaBytes int64
	// Keep keeps the recordings around the camera's events longer (keep.go).
	Keep EventKeep
}

// Lease is the cluster-wide lease that lets one node sweep at a time
// (implemented by *cluster.TaskLease).
type Lease interface {
	// Acquire takes the lease when free or expired, or renews it when this
	// node owns it, and reports whether this node owns it now.
	Acquire(ctx context.Context) (bool, error)
}

// Config configures a Sweeper.
type Config struct {
	// Store holds the objects. Required.
	Store storage.Store

	// Cameras returns every camera with its retention. Cameras not listed
	// are left alone. Required.
	Cameras func(ctx context.Context) ([]CameraRetention, error)

	// Lease, when set, lets only its owner sweep. Nil means this process is
	// the only sweeper.
	Lease Lease

	// Interval is the time between two sweeps. It defaults to 1 hour.
	Interval time.Duration

	// Poll is how often the lease is taken or renewed (and the time between
	// checks whether a sweep is due). It defaults to 1 minute; the lease's
	// TTL should be LeaseTTL(Poll).
	Poll time.Duration

	// Lifecycle installs expiry rules in stores that implement
	// storage.Lifecycle. It defaults to false.
	Lifecycle bool

	// VideosMaxAge, when positive, adds an expiry rule for downloadable
	// videos (prefix videos/), rounded up to whole days. Camera retention
	// never applies to them.
	VideosMaxAge time.Duration

	// Now is the clock. It defaults to time.Now; tests inject one.
	Now func() time.Time

	// QuotaWarning is the share of a quota at which
	// vigia_storage_quota_warning turns 1. It defaults to
	// DefaultQuotaWarning (0.9).
	QuotaWarning float64

	// Registerer, when set, receives the storage usage metrics
	// (vigia_storage_bytes and the quota metrics, docs/metrics.md).
	Registerer prometheus.Registerer

	// Holds, when set, returns the legal holds, read at the start of each
	// sweep: recordings they cover are never deleted. If it fails, the
	// sweep deletes nothing.
	Holds func(ctx context.Context) ([]Hold, error)

	// Node names this node in the gap records it writes.
	Node string

	// Log receives one line per sweep and the errors.
	Log *zap.Logger
}

// Report counts what one sweep did.
type Report struct {
	// Cameras is the number of cameras swept.
	Cameras int
	// Prefixes is the number of whole day or hour prefixes deleted.
	Prefixes int
	// Objects is the number of objects deleted.
	Objects int
	// QuotaSegments and QuotaBytes count the segments deleted for quotas
	// (included in Objects).
	QuotaSegments int
	QuotaBytes    int64
	// Held is the number of objects kept because a legal hold covers them.
	Held int
}

// Sweeper expires camera objects past their retention.
type Sweeper struct {
	cfg Config

	rulesOff atomic.Bool // the store refused lifecycle rules
	m        *quotaMetrics

	mu        sync.Mutex
	published map[[2]string]bool // label sets of the storage metrics set by the last sweep
	holds     holdSet            // the legal holds of the sweep running

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// New returns a Sweeper; Start runs it in the background.
func New(cfg Config) (*Sweeper, error) {
	if cfg.Store == nil || cfg.Cameras == nil {
		return nil, fmt.Errorf("%w: Store and Cameras are required", ErrConfig)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.QuotaWarning <= 0 {
		cfg.QuotaWarning = DefaultQuotaWarning
	}
	return &Sweeper{cfg: cfg, m: newQuotaMetrics(cfg.Registerer)}, nil
}

// Start runs the sweeper in one goroutine until Close: every Poll it takes
// or renews the lease, and the owner sweeps when Interval has passed since
// its last sweep (at once after taking the lease).
func (s *Sweeper) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		var last time.Time
		t := time.NewTicker(s.cfg.Poll)
		defer t.Stop()
		for {
			owner, swept, err := s.step(ctx, last)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				s.cfg.Log.Warn("retention sweep failed", zap.Error(err))
			}
			if swept {
				last = s.cfg.Now()
			}
			if !owner {
				last = time.Time{}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
}

// step renews the lease and sweeps when due.
func (s *Sweeper) step(ctx context.Context, last time.Time) (owner, swept bool, err error) {
	if s.cfg.Lease != nil {
		owner, err = s.cfg.Lease.Acquire(ctx)
		if err != nil || !owner {
			return false, false, err
		}
	}
	if !last.IsZero() && s.cfg.Now().Sub(last) < s.cfg.Interval {
		return true, false, nil
	}
	_, err = s.run(ctx)
	return true, err == nil || !errors.Is(err, ErrLeaseLost), err
}

// Close stops the background sweeper and waits for it. A sweep in progress
// stops between two deletions; the next owner finishes it.
func (s *Sweeper) Close() {
	s.once.Do(func() {
		if s.cancel != nil {
			s.cancel()
			<-s.done
		}
	})
}

// RunOnce takes the lease (when configured) and, if this node owns it,
// installs the lifecycle rules and sweeps once. swept is false when another
// node owns the lease.
func (s *Sweeper) RunOnce(ctx context.Context) (r Report, swept bool, err error) {
	if s.cfg.Lease != nil {
		owner, err := s.cfg.Lease.Acquire(ctx)
		if err != nil || !owner {
			return Report{}, false, err
		}
	}
	r, err = s.run(ctx)
	return r, true, err
}

// run installs rules and sweeps every camera, renewing the lease between cameras.
func (s *Sweeper) run(ctx context.Context) (Report, error) {
	cams, err := s.cfg.Cameras(ctx)
	if err != nil && len(cams) == 0 {
		return Report{}, fmt.Errorf("retention cameras: %w", err)
	}
	if err != nil {
		s.cfg.Log.Warn("some camera records could not be read; sweeping the others", zap.Error(err))
	}
	if err := s.setHolds(ctx); err != nil {
		return Report{}, err
	}
	if err := s.EnsureRules(ctx, cams); err != nil {
		s.cfg.Log.Warn("lifecycle rules not installed", zap.Error(err))
	}
	start := s.cfg.Now()
	var r Report
	var errs []error
	for i, c := range cams {
		if i > 0 && s.cfg.Lease != nil {
			owner, err := s.cfg.Lease.Acquire(ctx)
			if err != nil {
				return r, err
			}
			if !owner {
				return r, ErrLeaseLost
			}
		}
		if err := s.sweepCamera(ctx, c, &r); err != nil {
			if ctx.Err() != nil {
				return r, ctx.Err()
			}
			errs = append(errs, fmt.Errorf("camera %s: %w", c.Camera, err))
		}
	}
	if err := s.enforceQuotas(ctx, cams, &r); err != nil {
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
		errs = append(errs, err)
	}
	s.cfg.Log.Info("retention sweep done",
		zap.Int("cameras", r.Cameras), zap.Int("prefixes", r.Prefixes), zap.Int("objects", r.Objects),
		zap.Int("quota_segments", r.QuotaSegments),
		zap.Duration("took", s.cfg.Now().Sub(start)), zap.Int("errors", len(errs)))
	return r, errors.Join(errs...)
}

// Sweep deletes the expired objects of every camera once, without the lease.
func (s *Sweeper) Sweep(ctx context.Context) (Report, error) {
	cams, err := s.cfg.Cameras(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("retention cameras: %w", err)
	}
	if err := s.setHolds(ctx); err != nil {
		return Report{}, err
	}
	var r Report
	var errs []error
	for _, c := range cams {
		if err := s.sweepCamera(ctx, c, &r); err != nil {
			errs = append(errs, fmt.Errorf("camera %s: %w", c.Camera, err))
		}
	}
	if err := s.enforceQuotas(ctx, cams, &r); err != nil {
		errs = append(errs, err)
	}
	return r, errors.Join(errs...)
}

// setHolds reads the legal holds for the sweep starting.
func (s *Sweeper) setHolds(ctx context.Context) error {
	hs, err := s.loadHolds(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.holds = hs
	s.mu.Unlock()
	return nil
}

// held reports whether a legal hold of the running sweep covers key.
func (s *Sweeper) held(key string) bool {
	s.mu.Lock()
	hs := s.holds
	s.mu.Unlock()
	return hs.heldKey(key)
}
