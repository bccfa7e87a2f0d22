package catalogue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// Defaults of JournalConfig.
const (
	DefaultJournalQueue  = 10_000
	DefaultJournalBurst  = 20
	DefaultJournalRefill = time.Minute
)

// JournalConfig configures a Journal.
type JournalConfig struct {
	// Store receives the records. Required.
	Store storage.Store

	// Node names this node in the records it writes.
	Node string

	// Publish, optional, sends a record to NATS (bus.Outbox.EnqueueGap):
	// it must not block.
	Publish func(g status.Gap, key string) error

	// Attrs, optional, returns the metadata and tags a camera's objects
	// carry (retention days), as segments get them, so that lifecycle
	// rules expire records with the segments.
	Attrs func(ctx context.Context, camera string) (meta, tags map[string]string)

	// MaxQueue bounds the records waiting for storage; past it the oldest
	// is dropped and counted. It defaults to 10,000.
	MaxQueue int

	// Burst and Refill rate-limit each camera: Burst records at once, one
	// more every Refill. Records over the budget are merged by cause into
	// one record spanning them (readers clip records to the gaps), written
	// when the budget allows. They default to 20 and 1 minute.
	Burst  int
	Refill time.Duration

	// RetryMin and RetryMax bound the backoff of a failed write. They
	// default to 1 and 30 seconds.
	RetryMin, RetryMax time.Duration

	// Log receives failures.
	Log *zap.Logger

	// Now is the clock. It defaults to time.Now.
	Now func() time.Time
}

// Journal stores gap records beside the segments (storage.GapKey) and
// publishes them, in the order recorded, retrying while storage is away.
// While a gap a node observes is open (camera offline, refusing
// credentials, unsupported), a continuation record is written at the start
// of every hour, so that any hour's listing explains it. Record never
// blocks; one goroutine writes.
type Journal struct {
	cfg JournalConfig

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []status.Gap
	open    map[openKey]status.Gap
	buckets map[string]*bucket
	merged  map[openKey]*status.Gap // over budget, waiting
	closing bool
	hour    int64 // hour start (ms) of the last continuations
	busy    bool  // a write is under way

	written, dropped, failed atomic.Uint64
	done                     chan struct{}
	stop                     chan struct{}
}

type openKey struct {
	camera string
	start  int64
	cause  status.Cause
}

type bucket struct {
	tokens float64
	at     time.Time
}

// NewJournal starts a Journal; Close stops it.
func NewJournal(cfg JournalConfig) *Journal {
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = DefaultJournalQueue
	}
	if cfg.Burst <= 0 {
		cfg.Burst = DefaultJournalBurst
	}
	if cfg.Refill <= 0 {
		cfg.Refill = DefaultJournalRefill
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
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	j := &Journal{cfg: cfg, open: map[openKey]status.Gap{}, buckets: map[string]*bucket{}, merged: map[openKey]*status.Gap{},
		done: make(chan struct{}), stop: make(chan struct{})}
	j.cond = sync.NewCond(&j.mu)
	j.hour = hourStartMs(cfg.Now())
	go j.run()
	return j
}

// continued reports whether an open gap of cause gets hourly
// continuations: the causes a node observes while it records the camera.
func continued(c status.Cause) bool {
	return c == status.CauseCameraOffline || c == status.CauseCameraAuth || c == status.CauseStreamUnsupported
}

// Record queues g to be written. An open record (EndMs 0) of a cause the
// node observes gets continuations until a record closes it (same camera,
// start and cause, EndMs set). Records that are not valid are dropped and
// counted.
func (j *Journal) Record(g status.Gap) {
	if g.Node == "" {
		g.Node = j.cfg.Node
	}
	if !g.Cause.Known() || g.StartMs <= 0 || (!g.Open() && g.EndMs < g.StartMs) || !storage.ValidCameraID(g.Camera) {
		j.dropped.Add(1)
		j.cfg.Log.Warn("gap record refused", zap.Any("gap", g))
		return
	}
	k := openKey{g.Camera, g.StartMs, g.Cause}
	j.mu.Lock()
	defer j.mu.Unlock()
	if g.Open() && continued(g.Cause) {
		j.open[k] = g
	} else if !g.Open() {
		delete(j.open, k)
	}
	if !j.take(g.Camera) {
		if m := j.merged[openKey{camera: g.Camera, cause: g.Cause}]; m != nil {
			m.StartMs = min(m.StartMs, g.StartMs)
			if m.Open() || g.Open() {
				m.EndMs = 0
			} else {
				m.EndMs = max(m.EndMs, g.EndMs)
			}
		} else {
			c := g
			j.merged[openKey{camera: g.Camera, cause: g.Cause}] = &c
		}
		return
	}
	j.pushLocked(g)
}

// take spends one of camera's tokens; j.mu is held.
func (j *Journal) take(camera string) bool {
	now := j.cfg.Now()
	b := j.buckets[camera]
	if b == nil {
		b = &bucket{tokens: float64(j.cfg.Burst), at: now}
		j.buckets[camera] = b
	}
	b.tokens = min(float64(j.cfg.Burst), b.tokens+float64(now.Sub(b.at))/float64(j.cfg.Refill))
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// pushLocked queues g and publishes it; j.mu is held.
func (j *Journal) pushLocked(g status.Gap) {
	if len(j.queue) >= j.cfg.MaxQueue {
		j.queue = j.queue[1:]
		if j.dropped.Add(1)%1000 == 1 {
			j.cfg.Log.Error("gap records dropped: storage has not taken them for long", zap.Int("queue", j.cfg.MaxQueue))
		}
	}
	j.queue = append(j.queue, g)
	if j.cfg.Publish != nil {
		if err := j.cfg.Publish(g, recordKey(g)); err != nil {
			j.cfg.Log.Debug("gap record not published", zap.Error(err))
		}
	}
	j.cond.Signal()
}

// recordKey returns g's storage key.
func recordKey(g status.Gap) string {
	var dur time.Duration
	if !g.Open() {
		dur = time.Duration(g.EndMs-g.StartMs) * time.Millisecond
	}
	return storage.GapKey(g.Camera, time.UnixMilli(g.StartMs), dur, string(g.Cause))
}

func hourStartMs(t time.Time) int64 { return t.UTC().Truncate(time.Hour).UnixMilli() }

// JournalStats counts a Journal's records.
type JournalStats struct {
	// Written were stored; Dropped refused or pushed out of a full queue;
	// Failed counts failed write attempts (each retried); Queued wait.
	Written, Dropped, Failed uint64
	Queued                   int
}

// Stats returns the journal's counts.
func (j *Journal) Stats() JournalStats {
	j.mu.Lock()
	q := len(j.queue)
	j.mu.Unlock()
	return JournalStats{Written: j.written.Load(), Dropped: j.dropped.Load(), Failed: j.failed.Load(), Queued: q}
}

// Flush waits until every record recorded so far, merged ones included, is
// written or ctx ends.
func (j *Journal) Flush(ctx context.Context) error {
	j.mu.Lock()
	j.releaseMergedLocked()
	j.mu.Unlock()
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		j.mu.Lock()
		idle := len(j.queue) == 0 && !j.busy
		j.mu.Unlock()
		if idle {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Close writes what it can until ctx ends (Flush), then stops the writer.
// Records left are logged.
func (j *Journal) Close(ctx context.Context) {
	err := j.Flush(ctx)
	j.mu.Lock()
	j.closing = true
	left := len(j.queue)
	j.mu.Unlock()
	close(j.stop)
	j.cond.Broadcast()
	<-j.done
	if err != nil && left > 0 {
		j.cfg.Log.Warn("gap records not written", zap.Int("records", left))
	}
}

// releaseMergedLocked queues every merged record; j.mu is held.
func (j *Journal) releaseMergedLocked() {
	for k, m := range j.merged {
		delete(j.merged, k)
		j.pushLocked(*m)
	}
}

// tick runs once a second: merged records whose camera has budget again
// are queued, and continuations at each new hour.
func (j *Journal) tick() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for k, m := range j.merged {
		if j.take(k.camera) {
			delete(j.merged, k)
			j.pushLocked(*m)
		}
	}
	h := hourStartMs(j.cfg.Now())
	if h == j.hour {
		return
	}
	j.hour = h
	for _, g := range j.open {
		if g.StartMs < h {
			c := g
			c.StartMs = h
			j.pushLocked(c)
		}
	}
}

// run writes queued records in order until Close.
func (j *Journal) run() {
	defer close(j.done)
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	go func() { // exits at Close
		for {
			select {
			case <-j.stop:
				return
			case <-ticker.C:
				j.tick()
			}
		}
	}()
	wait := j.cfg.RetryMin
	for {
		j.mu.Lock()
		for len(j.queue) == 0 && !j.closing {
			j.cond.Wait()
		}
		if j.closing {
			j.mu.Unlock()
			return
		}
		g := j.queue[0]
		j.busy = true
		j.mu.Unlock()
		err := j.write(g)
		j.mu.Lock()
		j.busy = false
		if err == nil {
			j.queue = j.queue[1:]
		}
		j.mu.Unlock()
		if err == nil {
			j.written.Add(1)
			wait = j.cfg.RetryMin
			continue
		}
		j.failed.Add(1)
		j.cfg.Log.Warn("gap record not stored, retrying", zap.String("camera", g.Camera), zap.Duration("retry_in", wait), zap.Error(err))
		t := time.NewTimer(wait)
		select {
		case <-j.stop:
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, j.cfg.RetryMax)
	}
}

// write stores g.
func (j *Journal) write(g status.Gap) error {
	key := recordKey(g)
	if key == "" {
		return nil // Record checked it: cannot happen
	}
	body, err := json.Marshal(g)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	meta := map[string]string{storage.MetaCamera: g.Camera}
	var tags map[string]string
	if j.cfg.Attrs != nil {
		m, t := j.cfg.Attrs(ctx, g.Camera)
		for k, v := range m {
			meta[k] = v
		}
		tags = t
	}
	if err := j.cfg.Store.Put(ctx, key, bytes.NewReader(body), int64(len(body)),
		storage.PutOptions{ContentType: "application/json", Metadata: meta, Tags: tags}); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	return nil
}
