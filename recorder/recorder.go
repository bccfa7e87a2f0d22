// Package recorder is a camera's home on this node, as mediamtx's path is.
// Each camera has one owner (a goroutine) that resolves its record, starts
// it, restarts it when a recorded setting changes, stops it for the cause
// the cluster gives, and carries the end of its last segment to the next
// run and the next node; each run is a supervised source feeding a
// pipeline goroutine that cuts segments into the spool. The recorder is
// the one writer of a camera's status (completeness and "no node has room"
// included) and of its gap records, and holds the rule for the retention
// days in effect. It reads and writes through small interfaces of its own
// (Registry, EndStore, Segments, Coverage, Statuses, Journal), never NATS,
// and never lets one camera's failure reach another.
package recorder

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/stream"
)

// Config configures a Recorder.
type Config struct {
	// NodeID names this node in status records.
	NodeID string

	// Spool receives the segments.
	Spool *segmenter.Spool

	// Drivers builds sources by URL scheme.
	Drivers ingest.Registry

	// Keys opens the sealed source URLs and P2P passwords of camera
	// records, and seals those of static cameras.
	Keys *sign.Keys

	// Discover, optional, turns a camera's opened source URL into the URL
	// its driver takes: an onvif:// camera's RTSP address is asked of the
	// device (app/onvif.go). It runs on the camera's owner goroutine, so it
	// must return within a bounded time; an error wrapping
	// ingest.PermanentError sets ERRO PERMANENTE until the record changes.
	Discover func(c camera.Config, url string) (string, error)

	// Registry, optional, is the cameras' registry, into which Register
	// writes static cameras.
	Registry Registry

	// Retention, optional, is the rule for the retention days in effect
	// (Retention.Days); the recorder gives it the records in effect here.
	Retention *Retention

	// Ends, optional, keeps the end of each camera's last segment for the
	// node that records it next.
	Ends EndStore

	// Segments, optional, tells a camera that starts the end of its last
	// stored segment: a last segment later than the end stored by a
	// graceful stop (Ends) means its node died.
	Segments Segments

	// Coverage, optional, works out each camera's completeness, which its
	// status carries (docs/status.md, Completeness).
	Coverage Coverage

	// Statuses, optional, receives each camera's status when it changes.
	Statuses Statuses

	// Journal, optional, receives each gap record: why a camera's
	// recording stopped or skipped, from when, and, once known, until
	// when (docs/recording.md, Gaps).
	Journal Journal

	// Source holds the settings common to all sources.
	Source ingest.SourceConfig

	// ConnectRate caps connection attempts per second across all cameras.
	// It defaults to 200.
	ConnectRate float64

	// ConnectConcurrency caps the connection attempts in progress across
	// all cameras (ingest.SupervisorConfig.Handshakes). It defaults to 256.
	ConnectConcurrency int

	// SegmentDuration and FragmentDuration are passed to the segmenter.
	SegmentDuration, FragmentDuration time.Duration

	// QueueSize is the per-camera queue between source and pipeline. It
	// defaults to 512 units.
	QueueSize int

	// QueueBytes bounds the media waiting in the queues of all cameras
	// together: past it, units are dropped (queue_full) however short
	// their camera's queue, so that a node starved of CPU or disk drops
	// frames instead of holding gigabytes of them (512 units of 1,000
	// cameras are several gigabytes). One camera holds at most its share
	// of it, QueueBytes divided by the cameras running but at least
	// 4 MiB: a camera whose pipeline falls behind, or that sends far
	// more than the others, drops its own units (queue_full) and leaves
	// the others theirs. It defaults to 256 MiB.
	QueueBytes int64

	// MaxCameraRate caps the bytes per second one camera may send, so
	// that a camera sending huge frames as fast as TCP takes them cannot
	// fill the spool, the storage and the node's memory: units past it
	// are dropped (FramesDropped{reason="camera_over_rate"}), and after a
	// video unit is dropped video resumes at the next keyframe within the
	// cap, the hole recorded as camera_over_rate. The cap is a token
	// bucket of MaxCameraRate bytes per second holding two seconds of it
	// (at least 1 MiB), so that a keyframe several times a camera's mean
	// frame passes. Zero: no cap.
	MaxCameraRate float64

	// MaxSegmentBytes bounds one segment's size: a segment is cut at the
	// first keyframe past it (segmenter.WriterConfig.MaxBytes). Zero: the
	// segmenter's default.
	MaxSegmentBytes int64

	// BackoffMin, BackoffMax and PermanentRetry tune the supervisor; zero
	// values take its defaults.
	BackoffMin, BackoffMax, PermanentRetry time.Duration

	// Consumers build, for each run of a camera, the consumers that
	// receive its media besides the segmenter (live, thumbnails, motion).
	// Optional.
	Consumers []stream.ConsumerFactory

	// Stage, optional, builds for each run of a camera's source the step
	// its units go through before the segmenter and the consumers (audio
	// transcoding to AAC).
	Stage stream.StageFactory

	// Metrics, optional.
	Metrics *metrics.Recorder

	// Log is the recorder's logger.
	Log *zap.Logger
}

// Recorder runs cameras.
type Recorder struct {
	cfg        Config
	limiter    *rate.Limiter
	handshakes chan struct{} // connection attempts in progress

	queued    atomic.Int64 // media bytes in the cameras' queues (QueueBytes)
	pipelines atomic.Int64 // pipelines running, for each camera's share of QueueBytes

	mu     sync.Mutex // before any owner's mu
	owners map[string]*owner
	closed bool
	// ends holds, for cameras stopped on this node, the end of their last
	// segment (kept endsKeep), for a start again here that cannot read
	// the EndStore.
	ends map[string]time.Time

	complete *completeness // nil without Config.Coverage
}

// New returns a Recorder.
func New(cfg Config) *Recorder {
	if cfg.ConnectRate <= 0 {
		cfg.ConnectRate = 200
	}
	if cfg.ConnectConcurrency <= 0 {
		cfg.ConnectConcurrency = 256
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 512
	}
	if cfg.QueueBytes <= 0 {
		cfg.QueueBytes = 256 << 20
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	burst := int(cfg.ConnectRate)
	if burst < 1 {
		burst = 1
	}
	r := &Recorder{
		cfg:        cfg,
		limiter:    rate.NewLimiter(rate.Limit(cfg.ConnectRate), burst),
		handshakes: make(chan struct{}, cfg.ConnectConcurrency),
		owners:     map[string]*owner{},
		ends:       map[string]time.Time{},
	}
	if cfg.Retention != nil {
		cfg.Retention.rec.Store(r)
	}
	if cfg.Coverage != nil {
		r.complete = newCompleteness(r, cfg.Coverage)
		go r.complete.run() // ends at Close
	}
	return r
}

// queueShare is the most bytes one camera may hold in the queues: an equal
// share of QueueBytes among the cameras running, at least queueShareFloor.
func (r *Recorder) queueShare() int64 {
	return max(r.cfg.QueueBytes/max(r.pipelines.Load(), 1), min(queueShareFloor, r.cfg.QueueBytes))
}

// Record makes the node record cam, held under lease epoch, and returns at
// once; called again with a changed record, the camera restarts only when
// a recorded setting changed. It implements cluster.Owners.
func (r *Recorder) Record(cam camera.Config, epoch uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	o := r.owners[cam.ID]
	if o == nil {
		o = newOwner(r, cam.ID)
		r.owners[cam.ID] = o
		go o.loop()
	}
	o.record(cam, epoch)
}

// Stop stops recording a camera for cause (status.CauseCameraBlocked,
// status.CauseCameraRemoved; anything else is status.CauseNodeHandover)
// and returns once its open segment is finished, the end of its last
// segment stored and a gap record of cause opened. It implements
// cluster.Owners.
func (r *Recorder) Stop(id string, cause status.Cause) {
	r.mu.Lock()
	o := r.owners[id]
	var done <-chan struct{}
	if o != nil {
		done = o.stop(cause) // under r.mu: the owner cannot be forgotten meanwhile
	}
	r.mu.Unlock()
	if done != nil {
		<-done
	}
}

// forget removes an owner that has nothing left to do, unless a request
// arrived meanwhile; it reports whether the owner's loop must end.
func (r *Recorder) forget(o *owner) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.want != nil || o.stopReq || len(o.wake) > 0 {
		return false
	}
	if r.owners[o.id] == o {
		delete(r.owners, o.id)
	}
	close(o.wake)
	return true
}

// Cameras returns the ids of the cameras running, sorted.
func (r *Recorder) Cameras() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.owners))
	for id := range r.owners {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Status returns a camera's current status on this node.
func (r *Recorder) Status(id string) (status.Status, bool) {
	r.mu.Lock()
	o := r.owners[id]
	r.mu.Unlock()
	if o == nil {
		return status.Status{}, false
	}
	return o.status.snapshot(), true
}

// Camera returns the record in effect of a camera running here.
func (r *Recorder) Camera(id string) (camera.Config, bool) {
	r.mu.Lock()
	o := r.owners[id]
	r.mu.Unlock()
	if o == nil {
		return camera.Config{}, false
	}
	c := o.config()
	return c, c.ID != ""
}

// Close stops every camera, as handed over (the node stops), and finishes
// their open segments.
func (r *Recorder) Close() {
	r.mu.Lock()
	r.closed = true
	var stops []<-chan struct{}
	for _, o := range r.owners {
		stops = append(stops, o.stop(status.CauseNodeHandover))
	}
	r.mu.Unlock()
	for _, done := range stops {
		<-done
	}
	if r.complete != nil {
		r.complete.close()
	}
}

// SegmentStored marks a camera's recording healthy again and counts the
// segment in its completeness; wire it to the spool's OnStored.
func (r *Recorder) SegmentStored(seg segmenter.Segment) {
	if r.cfg.Coverage != nil {
		r.cfg.Coverage.Stored(seg.Camera, seg.StartMs(), seg.End().UnixMilli())
	}
	r.setRecordingError(seg.Camera, false)
}

// SegmentFailed marks a camera's recording as failing; wire it to the
// spool's OnUploadError.
func (r *Recorder) SegmentFailed(camera string) { r.setRecordingError(camera, true) }

// SegmentDropped records the gap a segment the spool dropped leaves
// (upload_failed, or spool_quota for any other reason); wire it to the
// spool's OnDropped.
func (r *Recorder) SegmentDropped(seg segmenter.Segment, reason string) {
	cause := status.CauseSpoolQuota
	if reason == "upload_failed" {
		cause = status.CauseUploadFailed
	}
	r.emitGap(status.Gap{Camera: seg.Camera, StartMs: seg.StartMs(), EndMs: seg.End().UnixMilli(), Cause: cause, Detail: reason})
}

func (r *Recorder) setRecordingError(id string, v bool) {
	r.mu.Lock()
	o := r.owners[id]
	r.mu.Unlock()
	if o != nil {
		o.status.setRecordingError(v)
	}
}

// updateGauges recounts cameras by status.
func (r *Recorder) updateGauges() {
	m := r.cfg.Metrics
	if m == nil {
		return
	}
	r.mu.Lock()
	owners := make([]*owner, 0, len(r.owners))
	for _, o := range r.owners {
		owners = append(owners, o)
	}
	r.mu.Unlock()
	counts := map[status.Code]int{}
	for _, o := range owners {
		counts[o.status.code()]++
	}
	for _, code := range []status.Code{status.Online, status.Offline, status.Permanent, status.Connecting, status.Blocked} {
		m.CamerasByStatus.WithLabelValues(code.Text()).Set(float64(counts[code]))
	}
}
