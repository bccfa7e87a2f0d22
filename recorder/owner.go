package recorder

import (
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/status"
)

// owner is the one owner of a camera's life on this node: one goroutine
// (loop) that starts the camera, restarts it when a recorded setting
// changes, stops it, and carries the end of its last segment from one run
// to the next and to the next node. Its states and transitions are the
// table of docs/cluster.md (Camera life):
//
//	idle     --Record-->              starting (last segment end read) --> running | failed
//	running  --Record, same settings--> running (plan, history_days updated in place)
//	running  --Record, other settings--> running (segment finished, new run)
//	running  --Stop-->                stopped (segment finished, end stored)
//	failed   --Record-->              starting
//	starting|failed --Stop-->         stopped
//
// Record and Stop only leave a request and wake the loop: they never
// block on the camera.
type owner struct {
	r   *Recorder
	id  string
	log *zap.Logger

	wake chan struct{} // one slot: a request is waiting

	mu      sync.Mutex
	want    *camera.Config  // the latest record asked for; nil once stopped
	epoch   uint64          // the lease epoch of want
	stopReq bool            // a Stop waits to be done
	stopWhy status.Cause    // why, given by the Stop
	waiters []chan struct{} // closed once the requested stop is done
	cfg     camera.Config   // the record in effect
	status  ownerStatus

	// Owned by loop.
	run     *run
	failed  bool          // the record in effect cannot be recorded
	started bool          // the stored last segment end was read
	lastEnd time.Time     // end of the camera's last segment known here
	applied camera.Config // the record the loop last acted on
	gaps    gapTracker    // the run's while one runs (gaps.go)
}

func newOwner(r *Recorder, id string) *owner {
	o := &owner{
		r:    r,
		id:   id,
		log:  r.cfg.Log.With(zap.String("camera", id)),
		wake: make(chan struct{}, 1),
	}
	o.status.init(o)
	o.gaps.o = o
	return o
}

func (o *owner) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// record asks for cam to be recorded.
func (o *owner) record(cam camera.Config, epoch uint64) {
	o.mu.Lock()
	o.want, o.epoch = &cam, epoch
	o.mu.Unlock()
	o.signal()
}

// stop asks for the camera to stop for cause; the channel closes once it
// did.
func (o *owner) stop(cause status.Cause) <-chan struct{} {
	done := make(chan struct{})
	o.mu.Lock()
	o.want = nil
	o.stopReq, o.stopWhy = true, cause
	o.waiters = append(o.waiters, done)
	o.mu.Unlock()
	o.signal()
	return done
}

// pending reports whether a request arrived that the loop has not taken.
func (o *owner) pending() bool { return len(o.wake) > 0 }

func (o *owner) loop() {
	for range o.wake {
		o.mu.Lock()
		stopReq, cause, waiters, want, epoch := o.stopReq, o.stopWhy, o.waiters, o.want, o.epoch
		o.stopReq, o.stopWhy, o.waiters = false, "", nil
		o.mu.Unlock()
		if stopReq {
			o.stopFor(cause)
			for _, w := range waiters {
				close(w)
			}
		}
		if want != nil {
			o.apply(*want, epoch)
			continue
		}
		if o.r.forget(o) {
			return
		}
	}
}

// apply makes the camera record cam.
func (o *owner) apply(cam camera.Config, epoch uint64) {
	if (o.run != nil || o.failed) && cam == o.applied {
		return
	}
	o.applied = cam
	spec, err := o.r.resolve(cam)
	var drv ingest.Driver
	if err == nil {
		drv, err = o.r.driver(spec)
	}
	if err != nil {
		o.finish()
		o.failed = true
		o.setConfig(cam)
		o.log.Warn("camera not recordable", zap.Error(err))
		o.status.fail(err)
		o.failedGap(err)
		return
	}
	o.failed = false
	o.status.secret(spec.URL)
	if o.run != nil && !restartNeeded(o.run.spec, spec) {
		// Nothing recorded changes: no new run, no gap.
		o.setConfig(cam)
		return
	}
	if o.run != nil {
		o.log.Info("camera settings changed, restarting")
		o.finish()
		o.gaps.note(status.CauseCameraChanged, "")
	}
	if !o.started {
		end, cause := o.startEnd()
		o.lastEnd = laterOf(o.lastEnd, end)
		o.gaps.note(cause, "")
		o.started = true
		if o.pending() {
			return // stopped or changed while the end was read
		}
	}
	o.setConfig(cam)
	o.log.Debug("camera started", zap.Uint64("epoch", epoch))
	o.run = o.startRun(spec, drv)
	o.r.updateGauges()
}

// finish stops the run, if any, finishing its open segment; the end of its
// last segment is remembered.
func (o *owner) finish() {
	if o.run != nil {
		o.run.stop()
		o.lastEnd = laterOf(o.lastEnd, o.run.w.LastEnd())
		o.run = nil
		o.r.noteEnd(o.id, o.lastEnd)
		o.r.updateGauges()
	}
}

// stopFor stops the camera on this node for cause: the run finishes, a
// gap record of cause opens and the end of the last segment is stored for
// the next node.
func (o *owner) stopFor(cause status.Cause) {
	o.finish()
	o.stopped(cause)
	o.storeEnd(o.lastEnd)
}

func (o *owner) setConfig(cam camera.Config) {
	o.mu.Lock()
	o.cfg = cam
	o.mu.Unlock()
	o.status.plan(cam.Width, cam.Height)
}

// config returns the record in effect.
func (o *owner) config() camera.Config {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cfg
}

// restartNeeded reports whether going from a to b changes what is
// recorded: the plan's resolution only changes resolution_error.
func restartNeeded(a, b ingest.Camera) bool {
	a.PlanWidth, a.PlanHeight, b.PlanWidth, b.PlanHeight = 0, 0, 0, 0
	return a != b
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (o *owner) dropped(reason string) {
	if m := o.r.cfg.Metrics; m != nil {
		m.FramesDropped.WithLabelValues(reason).Inc()
	}
}

func (o *owner) panicked() {
	if m := o.r.cfg.Metrics; m != nil {
		m.Panics.Inc()
	}
}

func (o *owner) attempt() {
	if m := o.r.cfg.Metrics; m != nil {
		m.ConnectAttempts.Inc()
	}
}

// probed counts a liveness probe of the camera.
func (o *owner) probed(ok bool) {
	if m := o.r.cfg.Metrics; m != nil {
		result := "failed"
		if ok {
			result = "ok"
		}
		m.CameraProbes.WithLabelValues(result).Inc()
	}
}

// driver returns the source driver of spec's URL scheme.
func (r *Recorder) driver(spec ingest.Camera) (ingest.Driver, error) {
	scheme, err := parseScheme(spec.URL)
	if err != nil {
		return nil, err
	}
	drv := r.cfg.Drivers[scheme]
	if drv == nil {
		return nil, ingest.Permanent(ingest.ReasonBadURL, fmt.Errorf("%w %q", ingest.ErrUnsupportedScheme, scheme))
	}
	return drv, nil
}
