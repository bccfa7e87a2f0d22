package segmenter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// SpoolConfig configures a Spool.
type SpoolConfig struct {
	// Dir holds one folder per camera with its spooled segments.
	Dir string

	// MaxBytes is the quota of the backlog: the finished segments waiting
	// for storage behind a newer finished segment of their camera (the
	// segments being written and each camera's newest finished one do not
	// count). When it is exceeded, the oldest segments of the backlog not
	// being uploaded are dropped. It defaults to 2 GiB.
	MaxBytes int64

	// Workers is the number of concurrent uploads. It defaults to 4.
	Workers int

	// Upload stores one finished segment; body holds seg.Size bytes. It is
	// retried with backoff until it succeeds or the spool closes, unless
	// its error wraps ErrUploadRefused: then the segment is dropped.
	Upload func(ctx context.Context, seg Segment, body io.ReadSeeker) error

	// OnStored is called after a segment was uploaded, with the time from
	// the segment's end in the spool to the object stored. Optional.
	OnStored func(seg Segment, latency time.Duration)

	// OnUploadError is called when an upload attempt fails. Optional.
	OnUploadError func(seg Segment, err error)

	// OnDropped is called when a segment is dropped: reason "spool_full"
	// (the quota), "disk_full" (the spool disk) or "upload_failed" (storage
	// refused it for good). Optional.
	OnDropped func(seg Segment, reason string)

	// RetryMin and RetryMax bound the upload retry backoff. They default to
	// 1 and 30 seconds.
	RetryMin, RetryMax time.Duration

	// Sync is how fragments are made durable. It defaults to SyncGroup
	// where the system has it, SyncFile elsewhere.
	Sync SpoolSync

	// SyncEvery is the least time between two group syncs (SyncGroup):
	// a fragment is durable within this and the sync's own time of its
	// end. It defaults to 250 ms.
	SyncEvery time.Duration

	// Log is the spool's logger.
	Log *zap.Logger
}

// Spool is the local disk buffer of segments on their way to storage.
type Spool struct {
	cfg   SpoolConfig
	group *groupSync // nil with SyncFile

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []*queued
	newest  map[string]*queued // each camera's newest finished segment
	busyCam map[string]bool
	bytes   int64 // everything on disk: open and finished segments
	backlog int64 // what counts against the quota (spool_quota.go)
	closed  bool
}

type queued struct {
	seg     Segment
	readyAt time.Time
	busy    bool
	backlog bool // a newer finished segment of the camera is queued
}

// NewSpool creates the spool folder. Call Start to recover leftovers and
// begin uploading.
func NewSpool(cfg SpoolConfig) (*Spool, error) {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 2 << 30
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 4
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = time.Second
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.SyncEvery <= 0 {
		cfg.SyncEvery = defaultSyncEvery
	}
	switch cfg.Sync {
	case "":
		cfg.Sync = SyncFile
		if groupSyncSupported {
			cfg.Sync = SyncGroup
		}
	case SyncFile:
	case SyncGroup:
		if !groupSyncSupported {
			cfg.Sync = SyncFile
		}
	default:
		return nil, fmt.Errorf("%w %q", errUnknownSync, cfg.Sync)
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("create spool dir: %w", err)
	}
	var group *groupSync
	if cfg.Sync == SyncGroup {
		g, err := newGroupSync(cfg.Dir, cfg.SyncEvery)
		if err != nil {
			return nil, err
		}
		group = g
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Spool{cfg: cfg, ctx: ctx, cancel: cancel, busyCam: map[string]bool{}, newest: map[string]*queued{}, group: group}
	s.cond = sync.NewCond(&s.mu)
	return s, nil
}

// Start recovers the segments left in the spool by a previous run (cutting
// partial ones back to their last complete fragment) and starts the upload
// workers.
func (s *Spool) Start() error {
	n, err := s.recoverAll()
	if err != nil {
		return err
	}
	if n > 0 {
		s.cfg.Log.Info("recovered spooled segments", zap.Int("segments", n))
	}
	for i := 0; i < s.cfg.Workers; i++ {
		s.wg.Add(1)
		go s.worker()
	}
	return nil
}

// Close stops the upload workers. Segments not uploaded stay on disk and are
// uploaded by the next Start.
func (s *Spool) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.cond.Broadcast()
	s.wg.Wait()
	if s.group != nil {
		s.group.close()
	}
}

// Drain waits until every finished segment is uploaded or ctx ends.
func (s *Spool) Drain(ctx context.Context) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		if s.Pending() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Pending returns the number of finished segments waiting for upload.
func (s *Spool) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Bytes returns the bytes held in the spool.
func (s *Spool) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// OldestAge returns the age of the oldest finished segment waiting for
// upload, zero when none waits.
func (s *Spool) OldestAge() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return 0
	}
	return time.Since(s.queue[0].readyAt)
}

func (s *Spool) camDir(camera string) string { return filepath.Join(s.cfg.Dir, camera) }

func basePath(dir string, startMs int64) string {
	return filepath.Join(dir, strconv.FormatInt(startMs, 10))
}

// create opens the spool file of a new segment and records its metadata.
func (s *Spool) create(meta Segment) (*spoolFile, error) {
	dir := s.camDir(meta.Camera)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create spool dir: %w", err)
	}
	s.reserve(dir)
	base := basePath(dir, meta.StartMs())
	if err := writeMeta(base+".json", meta); err != nil {
		_ = os.Remove(base + ".json.tmp")
		return nil, s.noSpace(err)
	}
	// Read and write: consumers read frames back while the segment is
	// open (media.Unit.Stored).
	f, err := os.OpenFile(base+".part", os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o640)
	if err != nil {
		_ = os.Remove(base + ".json")
		return nil, s.noSpace(fmt.Errorf("create spool file: %w", err))
	}
	return &spoolFile{s: s, base: base, path: base + ".part", f: f, fd: fileFD(f)}, nil
}

// writeMeta writes the metadata file atomically.
func writeMeta(path string, meta Segment) error {
	b, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o640); err != nil {
		return fmt.Errorf("write spool metadata: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write spool metadata: %w", err)
	}
	return nil
}

func readMeta(path string) (Segment, error) {
	var meta Segment
	b, err := os.ReadFile(path)
	if err != nil {
		return meta, err
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return meta, fmt.Errorf("%w: metadata: %v", ErrCorruptSpool, err)
	}
	return meta, nil
}

// addBytes accounts for n more bytes on disk (an open segment growing, or
// a file removed). The quota does not count open segments: it is enforced
// when a segment is queued (enqueue).
func (s *Spool) addBytes(n int64) {
	s.mu.Lock()
	s.bytes += n
	s.mu.Unlock()
}

// reserve makes room before a segment starts: while the spool's disk has
// less free space than twice the newest finished segment, the oldest
// finished segment not being uploaded is dropped (as noSpace does), so that
// a full disk costs the oldest video rather than the segment being written.
func (s *Spool) reserve(dir string) {
	for range 8 {
		s.mu.Lock()
		var need int64
		if n := len(s.queue); n > 0 {
			need = 2 * s.queue[n-1].seg.Size
		}
		s.mu.Unlock()
		if need == 0 {
			return
		}
		free := freeBytes(dir)
		if free < 0 || free >= need {
			return
		}
		if !s.dropOldest(fmt.Errorf("%d bytes free on the spool disk, %d wanted: %w", free, need, syscall.ENOSPC)) {
			return
		}
	}
}

// noSpace handles a write error of the spool: when the disk is full
// (ENOSPC), the oldest finished segment not being uploaded is dropped to
// make room for the newest video (counted with reason "disk_full", logged at
// error level). With nothing to drop, frames are not written until uploads
// free space. It returns err.
func (s *Spool) noSpace(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		s.dropOldest(err)
	}
	return err
}

// dropOldest drops the oldest finished segment not being uploaded because
// of err (disk full) and reports whether there was one.
func (s *Spool) dropOldest(err error) bool {
	s.mu.Lock()
	var victim *queued
	for i, q := range s.queue {
		if !q.busy {
			victim = q
			s.unqueue(i)
			break
		}
	}
	s.mu.Unlock()
	if victim == nil {
		s.cfg.Log.Error("spool disk full, nothing left to drop: frames are not written until uploads free space", zap.Error(err))
		return false
	}
	removeSegmentFiles(victim.seg.Path)
	s.cfg.Log.Error("spool disk full, oldest segment dropped",
		zap.String("camera", victim.seg.Camera), zap.Int64("start_ms", victim.seg.StartMs()), zap.Int64("size", victim.seg.Size), zap.Error(err))
	if s.cfg.OnDropped != nil {
		s.cfg.OnDropped(victim.seg, "disk_full")
	}
	return true
}

func removeSegmentFiles(path string) {
	base := strings.TrimSuffix(strings.TrimSuffix(path, ".mp4"), ".part")
	_ = os.Remove(base + ".mp4")
	_ = os.Remove(base + ".part")
	_ = os.Remove(base + ".json")
}

// recoverAll finds leftover segments: finished ones are queued, partial ones
// are cut back to their last complete fragment first.
func (s *Spool) recoverAll() (int, error) {
	cams, err := os.ReadDir(s.cfg.Dir)
	if err != nil {
		return 0, fmt.Errorf("read spool dir: %w", err)
	}
	n := 0
	for _, c := range cams {
		if !c.IsDir() {
			continue
		}
		dir := filepath.Join(s.cfg.Dir, c.Name())
		entries, err := os.ReadDir(dir)
		if err != nil {
			return n, fmt.Errorf("read spool dir: %w", err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for _, name := range names {
			p := filepath.Join(dir, name)
			switch {
			case strings.HasSuffix(name, ".part"):
				if err := s.recoverFile(p, false); err != nil {
					s.cfg.Log.Warn("spool file not recoverable, removed", zap.String("path", p), zap.Error(err))
					removeSegmentFiles(p)
					continue
				}
				n++
			case strings.HasSuffix(name, ".mp4"):
				meta, err := readMeta(strings.TrimSuffix(p, ".mp4") + ".json")
				if err != nil {
					s.cfg.Log.Warn("spooled segment without metadata, recovering from file", zap.String("path", p), zap.Error(err))
					if err := s.recoverFile(p, false); err != nil {
						removeSegmentFiles(p)
					}
					continue
				}
				meta.Path = p
				s.mu.Lock()
				s.bytes += meta.Size
				s.mu.Unlock()
				s.enqueue(meta)
				n++
			case strings.HasSuffix(name, ".tmp"):
				_ = os.Remove(p)
			}
		}
	}
	return n, nil
}
