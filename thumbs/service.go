package thumbs

import (
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/thumbs/decoder"
)

// Service makes the thumbnails and snapshots of every camera of a node.
// It is safe for concurrent use.
type Service struct {
	cfg       Config
	available bool

	jobs    chan job
	closing chan struct{}
	wg      sync.WaitGroup
	once    sync.Once

	mu   sync.Mutex
	cams map[string]*camState

	stored       [3]atomic.Uint64 // by kindIndex
	dropped      atomic.Uint64
	decodeErrors atomic.Uint64
	storeErrors  atomic.Uint64
	unreadable   atomic.Uint64
	cpuNanos     atomic.Int64
}

// Stats are the Service's counters since it started.
type Stats struct {
	// Minute, Hourly and Snapshots count the images stored.
	Minute, Hourly, Snapshots uint64
	// Dropped counts thumbnails not made because the queue was full.
	Dropped uint64
	// DecodeErrors counts keyframes that could not be decoded or encoded
	// (a decoder process that failed included).
	DecodeErrors uint64
	// StoreErrors counts images that could not be stored.
	StoreErrors uint64
	// Unreadable counts keyframes a snapshot could not read back from the
	// spool file because their segment had ended (the snapshot then takes
	// the newer keyframe, or fails with ErrNoKeyframe).
	Unreadable uint64
	// Queued is the number of thumbnails waiting for a worker.
	Queued int
	// CPU is the CPU time the decoder processes spent decoding, scaling
	// and encoding the images made (not the images that failed).
	CPU time.Duration
}

// New starts a Service. Without a decoder that can decode (a build
// without cgo, no decoder process) it logs so once and every Consumer is
// nil; Available reports false.
func New(cfg Config) *Service {
	cfg = cfg.withDefaults()
	s := &Service{
		cfg:       cfg,
		available: cfg.Decoder != nil && cfg.Decoder.Available(),
		jobs:      make(chan job, cfg.Queue),
		closing:   make(chan struct{}),
		cams:      make(map[string]*camState),
	}
	if !s.available {
		cfg.Log.Warn("thumbnails, snapshots and motion detection unavailable: " + UnavailableReason(cfg.Decoder))
		return s
	}
	for i := 0; i < cfg.Workers; i++ {
		s.wg.Add(1)
		go s.work()
	}
	return s
}

// UnavailableReason says why dec cannot decode: "built without cgo" or
// "no decoder process"; empty when it can.
func UnavailableReason(dec Decoder) string {
	switch {
	case !decoder.Available():
		return "built without cgo"
	case dec == nil || !dec.Available():
		return "no decoder process"
	}
	return ""
}

// Available reports whether the Service can decode video.
func (s *Service) Available() bool { return s.available }

// Stats returns the counters.
func (s *Service) Stats() Stats {
	return Stats{
		Minute:       s.stored[kindIndex(KindMinute)].Load(),
		Hourly:       s.stored[kindIndex(KindHourly)].Load(),
		Snapshots:    s.stored[kindIndex(KindSnapshot)].Load(),
		Dropped:      s.dropped.Load(),
		DecodeErrors: s.decodeErrors.Load(),
		StoreErrors:  s.storeErrors.Load(),
		Unreadable:   s.unreadable.Load(),
		Queued:       len(s.jobs),
		CPU:          time.Duration(s.cpuNanos.Load()),
	}
}

// Close stops the workers after the image they are making; queued
// thumbnails are discarded (logged). It blocks until the workers exited.
func (s *Service) Close() {
	s.once.Do(func() {
		close(s.closing)
		s.wg.Wait()
		if n := len(s.jobs); n > 0 {
			s.cfg.Log.Info("queued thumbnails discarded at shutdown", zap.Int("thumbnails", n))
		}
	})
}

func kindIndex(k Kind) int {
	switch k {
	case KindMinute:
		return 0
	case KindHourly:
		return 1
	}
	return 2
}
