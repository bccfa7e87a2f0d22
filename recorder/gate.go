package recorder

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/status"
)

// gate is what a camera's unit passes on the source's side of the
// pipeline before it is queued: the camera's byte-rate cap
// (Config.MaxCameraRate) and its share of the queues' bytes
// (Config.QueueBytes). After it drops a video unit, video waits for the
// next keyframe it admits, which it marks Gap.
type gate struct {
	mu    sync.Mutex
	lim   *rate.Limiter // nil: no cap
	skip  bool          // a video unit was dropped: video waits for a keyframe
	cause status.Cause  // of the video dropped since the pipeline last took it (take)
}

// rateCapBurst is the smallest burst of a camera's cap: a keyframe up to
// it passes whatever the cap.
const rateCapBurst = 1 << 20

// queueShareFloor is the least share of Config.QueueBytes a camera may
// hold whatever the number of cameras (when QueueBytes is larger).
const queueShareFloor = 4 << 20

// newGate returns the gate of a camera capped at bytesPerSec (0: none).
func newGate(bytesPerSec float64) *gate {
	g := &gate{}
	if bytesPerSec > 0 {
		burst := max(int(2*bytesPerSec), rateCapBurst)
		g.lim = rate.NewLimiter(rate.Limit(bytesPerSec), burst)
	}
	return g
}

// admit returns "" when unit u of size bytes may be queued, else the
// reason it is dropped: "queue_full" when the camera holds its share of
// the queues' bytes (overShare), "camera_over_rate" past its cap. video
// says whether u is of the run's video track.
func (g *gate) admit(u *media.Unit, size int, video, overShare bool, now time.Time) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if video && g.skip && !u.Key {
		return dropReason(g.cause)
	}
	var cause status.Cause
	switch {
	case overShare:
		cause = status.CauseQueueOverflow
	case g.lim != nil && !g.lim.AllowN(now, size):
		cause = status.CauseCameraOverRate
	}
	if cause != "" {
		if video {
			g.skip = true
			if g.cause == "" {
				g.cause = cause
			}
		}
		return dropReason(cause)
	}
	if video && g.skip {
		g.skip = false
		u.Gap = true
	}
	return ""
}

// dropReason is the FramesDropped reason of a unit dropped for cause.
func dropReason(c status.Cause) string {
	if c == status.CauseCameraOverRate {
		return "camera_over_rate"
	}
	return "queue_full"
}

// take returns, once, the cause of the video the gate dropped since it
// last said ("" for none): the cause of the hole it left.
func (g *gate) take() status.Cause {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.cause
	g.cause = ""
	return c
}
