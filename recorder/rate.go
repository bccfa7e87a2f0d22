package recorder

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/vigia/vigia/media"
)

// rateCap is a camera's byte-rate cap (Config.MaxCameraRate), applied by
// the source's side of the pipeline before a unit is queued.
type rateCap struct {
	mu      sync.Mutex
	lim     *rate.Limiter
	skip    bool // a video unit was dropped: video waits for a keyframe within the cap
	dropped bool // video was dropped since the last unit that reported it (gapNoted)
}

// rateCapBurst is the smallest burst of a camera's cap: a keyframe up to
// it passes whatever the cap.
const rateCapBurst = 1 << 20

// newRateCap returns the cap of bytesPerSec, nil for none.
func newRateCap(bytesPerSec float64) *rateCap {
	if !(bytesPerSec > 0) {
		return nil
	}
	burst := max(int(2*bytesPerSec), rateCapBurst)
	return &rateCap{lim: rate.NewLimiter(rate.Limit(bytesPerSec), burst)}
}

// admit reports whether unit u of size bytes is within the cap; video
// says whether it is of the run's video track. A keyframe admitted after
// video was dropped is marked Gap.
func (c *rateCap) admit(u *media.Unit, size int, video bool, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if video && c.skip && !u.Key {
		return false
	}
	if !c.lim.AllowN(now, size) {
		if video {
			c.skip, c.dropped = true, true
		}
		return false
	}
	if video && c.skip {
		c.skip = false
		u.Gap = true
	}
	return true
}

// overRate reports, once, that video was dropped over the cap since it
// last said so: the hole it leaves is camera_over_rate.
func (c *rateCap) overRate() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.dropped
	c.dropped = false
	return d
}
