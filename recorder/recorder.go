// Package recorder runs the cameras assigned to this node: for each, a
// supervised source feeding a pipeline goroutine that cuts segments into the
// spool. It reports status through a hook and never lets one camera's
// failure reach another.
package recorder

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/metrics"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/status"
)

// Config configures a Recorder.
type Config struct {
	// NodeID names this node in status records.
	NodeID string

	// Spool receives the segments.
	Spool *segmenter.Spool

	// Drivers builds sources by URL scheme.
	Drivers ingest.Registry

	// Source holds the settings common to all sources.
	Source ingest.SourceConfig

	// ConnectRate caps connection attempts per second across all cameras.
	// It defaults to 20.
	ConnectRate float64

	// SegmentDuration and FragmentDuration are passed to the segmenter.
	SegmentDuration, FragmentDuration time.Duration

	// QueueSize is the per-camera queue between source and pipeline. It
	// defaults to 512 units.
	QueueSize int

	// BackoffMin, BackoffMax and PermanentRetry tune the supervisor; zero
	// values take its defaults.
	BackoffMin, BackoffMax, PermanentRetry time.Duration

	// Consumers build, for each camera, the consumers that receive its
	// media besides the segmenter (live, thumbnails, motion). Optional.
	Consumers []ConsumerFactory

	// OnStatus receives each camera's status when it changes. Optional.
	OnStatus func(status.Status)

	// Metrics, optional.
	Metrics *metrics.Recorder

	// Log is the recorder's logger.
	Log *zap.Logger
}

// Recorder runs cameras.
type Recorder struct {
	cfg     Config
	limiter *rate.Limiter

	mu     sync.Mutex
	cams   map[string]*camera
	closed bool
	// ends holds, for cameras stopped on this node, the end of their last
	// segment, so that the camera started again (fencing, a handover back)
	// never starts a segment before it: a new run's wall-clock anchor is
	// the node's clock at its first frame, and the last run's may have been
	// taken late on a loaded machine. Entries older than endsKeep go.
	ends map[string]time.Time
}

// endsKeep is how long the end of a stopped camera's last segment is kept.
const endsKeep = 10 * time.Minute

// NoteEnd records end as the end of a camera's last segment, unless a
// later one is noted: the camera's next start on this node begins no
// segment before it. A node taking the camera over from another notes the
// other's last end here before Add.
func (r *Recorder) NoteEnd(id string, end time.Time) {
	if end.IsZero() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ends == nil {
		r.ends = map[string]time.Time{}
	}
	if end.After(r.ends[id]) {
		r.ends[id] = end
	}
	for k, e := range r.ends {
		if time.Since(e) > endsKeep {
			delete(r.ends, k)
		}
	}
}

// LastEnd returns the end noted for a camera not running here (zero if
// none): the end of its last segment once Remove has returned.
func (r *Recorder) LastEnd(id string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ends[id]
}

// takeEnd returns and forgets the end noted for a camera.
func (r *Recorder) takeEnd(id string) time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.ends[id]
	delete(r.ends, id)
	return e
}

// New returns a Recorder.
func New(cfg Config) *Recorder {
	if cfg.ConnectRate <= 0 {
		cfg.ConnectRate = 20
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 512
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	burst := int(cfg.ConnectRate)
	if burst < 1 {
		burst = 1
	}
	return &Recorder{
		cfg:     cfg,
		limiter: rate.NewLimiter(rate.Limit(cfg.ConnectRate), burst),
		cams:    map[string]*camera{},
	}
}

// Add starts recording cam. A camera already running with the same settings
// is left alone; with other settings it is restarted.
func (r *Recorder) Add(cam ingest.Camera) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return segmenter.ErrClosed
	}
	old := r.cams[cam.ID]
	if old != nil && old.spec == cam {
		r.mu.Unlock()
		return nil
	}
	delete(r.cams, cam.ID)
	r.mu.Unlock()
	if old != nil {
		old.stop()
	}
	c, err := r.startCamera(cam)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		go c.stop()
		return segmenter.ErrClosed
	}
	r.cams[cam.ID] = c
	r.updateGauges()
	return nil
}

// Remove stops recording a camera, finishing its open segment.
func (r *Recorder) Remove(id string) {
	r.mu.Lock()
	c := r.cams[id]
	delete(r.cams, id)
	r.updateGauges()
	r.mu.Unlock()
	if c != nil {
		c.stop()
	}
}

// Cameras returns the ids of the cameras running, sorted.
func (r *Recorder) Cameras() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(r.cams))
	for id := range r.cams {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Status returns a camera's current status.
func (r *Recorder) Status(id string) (status.Status, bool) {
	r.mu.Lock()
	c := r.cams[id]
	r.mu.Unlock()
	if c == nil {
		return status.Status{}, false
	}
	return c.snapshot(), true
}

// Close stops every camera and finishes their open segments.
func (r *Recorder) Close() {
	r.mu.Lock()
	r.closed = true
	cams := r.cams
	r.cams = map[string]*camera{}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range cams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.stop()
		}()
	}
	wg.Wait()
}

// SegmentStored marks a camera's recording healthy again; wire it to the
// spool's OnStored.
func (r *Recorder) SegmentStored(camera string) { r.setRecordingError(camera, false) }

// SegmentFailed marks a camera's recording as failing; wire it to the
// spool's OnUploadError.
func (r *Recorder) SegmentFailed(camera string) { r.setRecordingError(camera, true) }

func (r *Recorder) setRecordingError(id string, v bool) {
	r.mu.Lock()
	c := r.cams[id]
	r.mu.Unlock()
	if c != nil {
		c.setRecordingError(v)
	}
}

// updateGauges recounts cameras by status; r.mu is held.
func (r *Recorder) updateGauges() {
	m := r.cfg.Metrics
	if m == nil {
		return
	}
	counts := map[status.Code]int{}
	for _, c := range r.cams {
		counts[c.code()]++
	}
	for _, code := range []status.Code{status.Online, status.Offline, status.Permanent, status.Connecting, status.Blocked} {
		m.CamerasByStatus.WithLabelValues(code.Text()).Set(float64(counts[code]))
	}
}

func (r *Recorder) statusChanged() {
	r.mu.Lock()
	r.updateGauges()
	r.mu.Unlock()
}

func (r *Recorder) startCamera(spec ingest.Camera) (*camera, error) {
	u, err := parseScheme(spec.URL)
	if err != nil {
		return nil, err
	}
	drv := r.cfg.Drivers[u]
	if drv == nil {
		return nil, fmt.Errorf("camera %s: %w %q", spec.ID, ingest.ErrUnsupportedScheme, u)
	}
	return newCamera(r, spec, drv), nil
}
