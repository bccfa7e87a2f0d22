package ingest

import "time"

// Clock defaults.
const (
	// DefaultJumpAfter is how far a video timestamp may stray from the
	// local clock before it is taken for a jump of the camera's clock.
	DefaultJumpAfter = 3 * time.Second

	// DefaultRateSpan is the shortest stretch of wall time over which the
	// camera's clock rate is measured.
	DefaultRateSpan = 10 * time.Second

	// DefaultRateTolerance is the relative difference between the camera's
	// clock rate and the local clock that is corrected.
	DefaultRateTolerance = 0.01
)

// Clock maps the media timestamps of one connection to timestamps that run
// with the local clock, so that recorded durations are true to wall time
// whatever the camera's clock does:
//
//   - a video timestamp more than JumpAfter away from the local clock (the
//     camera's clock jumped back, or forward, by any amount) re-anchors the
//     mapping at the local clock: the output goes on without a step;
//   - a camera whose timestamps run at another rate than the local clock
//     (declares 25 fps, sends 21) is measured over RateSpan and its
//     timestamps are scaled, the offset built up meanwhile being absorbed
//     over the next span. The rate is measured between the least delayed
//     frames near both ends of the span (frames arrive late, never early):
//     a stall of the camera's encoder or of the network, frames arriving
//     late and then in a burst, is not a wrong rate. Nor is a step of the
//     delay (frames arriving later from some moment on): a camera whose
//     clock runs at the local rate is scaled only when both halves of the
//     span find it off.
//
// A camera whose clock agrees with the local clock within RateTolerance
// keeps its own timestamps untouched (only shifted). Clock is not safe for
// concurrent use.
type Clock struct {
	// JumpAfter defaults to DefaultJumpAfter.
	JumpAfter time.Duration
	// RateSpan defaults to DefaultRateSpan.
	RateSpan time.Duration
	// RateTolerance defaults to DefaultRateTolerance.
	RateTolerance float64

	started bool
	wall0   time.Time     // wall time of output 0
	mA      time.Duration // media timestamp at the anchor
	oA      time.Duration // output timestamp at the anchor
	wA      time.Time     // wall time at the anchor
	rate    float64       // output per media time
	lastO   time.Duration // last video output
	evalAt  time.Time     // last rate evaluation

	// The least delayed frames: of the first window after the anchor
	// (base), of the window running (cur) and of the one before (prev).
	base, cur, prev clockPoint
	winAt           time.Time // start of the window running
	// The least delayed frames of the last windows since the anchor,
	// oldest first: the middle of a measurement.
	past  [pastWindows]clockPoint
	npast int

	jumps, corrections int
}

func (c *Clock) defaults() {
	if c.JumpAfter <= 0 {
		c.JumpAfter = DefaultJumpAfter
	}
	if c.RateSpan <= 0 {
		c.RateSpan = DefaultRateSpan
	}
	if c.RateTolerance <= 0 {
		c.RateTolerance = DefaultRateTolerance
	}
}

// Video maps the timestamp of a video frame that arrived at now and
// updates the mapping (jumps, rate). It returns the output timestamp. Give
// it decoding times, which arrive in order: presentation times of B-frames
// go back and forth by a few frames and would pass for a wrong rate.
func (c *Clock) Video(pts time.Duration, now time.Time) time.Duration {
	if !c.started {
		c.defaults()
		c.started = true
		c.wall0, c.wA, c.evalAt = now, now, now
		c.mA, c.oA, c.rate = pts, 0, 1
		c.lastO = 0
		return 0
	}
	o := c.out(pts)
	target := now.Sub(c.wall0)
	lag := target - o
	if lag > c.JumpAfter || (lag < -c.JumpAfter && target >= c.lastO) {
		// The camera's clock jumped: go on from the local clock.
		c.anchor(pts, target, now)
		c.jumps++
		o = target
	} else {
		c.observe(pts, now)
	}
	if now.Sub(c.wA) >= c.RateSpan && now.Sub(c.evalAt) >= c.RateSpan/2 && c.measurable() {
		c.evalAt = now
		end := c.end()
		measured := float64(end.w.Sub(c.base.w)) / float64(end.m-c.base.m)
		lag := end.w.Sub(c.wall0) - c.out(end.m)
		d := measured/c.rate - 1
		off := d > c.RateTolerance || d < -c.RateTolerance
		if off && c.rate == 1 && !c.steady(end, d) {
			// The halves of the span disagree: the frames' delay
			// stepped, the camera's rate is its own.
			off = false
		}
		if off || c.rate != 1 {
			// Scale to the measured rate and absorb the offset built up
			// over the next span; a camera back to the local rate gets 1.
			rate := measured
			if rd := measured - 1; rd <= c.RateTolerance && rd >= -c.RateTolerance {
				rate = 1
			}
			adj := 1 + float64(lag)/float64(c.RateSpan)
			adj = min(max(adj, 0.5), 1.5)
			c.anchor(pts, o, now)
			if rate != 1 || lag > c.JumpAfter/4 || lag < -c.JumpAfter/4 {
				c.rate = rate * adj
			} else {
				c.rate = 1
			}
			c.corrections++
		}
	}
	if o > c.lastO {
		c.lastO = o
	}
	return o
}

// Map maps a timestamp of another track (audio) with the current mapping,
// without updating it.
func (c *Clock) Map(pts time.Duration) time.Duration {
	if !c.started {
		return 0
	}
	return c.out(pts)
}

// Wall returns the wall-clock time of output timestamp o.
func (c *Clock) Wall(o time.Duration) time.Time { return c.wall0.Add(o) }

// Started reports whether a video frame was mapped yet.
func (c *Clock) Started() bool { return c.started }

// Jumps returns how many timestamp jumps were absorbed.
func (c *Clock) Jumps() int { return c.jumps }

// Corrections returns how many times the rate was corrected.
func (c *Clock) Corrections() int { return c.corrections }

// Rate returns the current output rate per media time (1 unless the
// camera's clock runs off).
func (c *Clock) Rate() float64 {
	if !c.started {
		return 1
	}
	return c.rate
}

func (c *Clock) out(pts time.Duration) time.Duration {
	d := pts - c.mA
	if c.rate == 1 {
		return c.oA + d
	}
	return c.oA + time.Duration(float64(d)*c.rate)
}

func (c *Clock) anchor(pts, o time.Duration, now time.Time) {
	c.mA, c.oA, c.wA, c.evalAt = pts, o, now, now
	c.base, c.cur, c.prev, c.winAt = clockPoint{}, clockPoint{}, clockPoint{}, now
	c.npast = 0
}

// clockPoint is a frame's media timestamp and arrival.
type clockPoint struct {
	m   time.Duration
	w   time.Time
	set bool
}

// before reports whether p arrived less delayed than q (q unset: true).
func (p clockPoint) before(q clockPoint) bool {
	return !q.set || p.w.Sub(q.w) < p.m-q.m
}

// window is the length of the windows whose least delayed frames are the
// ends of a rate measurement.
func (c *Clock) window() time.Duration { return c.RateSpan / 4 }

// observe notes a frame for the rate measurement.
func (c *Clock) observe(pts time.Duration, now time.Time) {
	if now.Sub(c.winAt) >= c.window() {
		if c.cur.set {
			if c.npast == pastWindows {
				copy(c.past[:], c.past[1:])
				c.npast--
			}
			c.past[c.npast] = c.cur
			c.npast++
		}
		c.prev, c.cur, c.winAt = c.cur, clockPoint{}, now
	}
	p := clockPoint{m: pts, w: now, set: true}
	if p.before(c.cur) {
		c.cur = p
	}
	if now.Sub(c.wA) < c.window() && p.before(c.base) {
		c.base = p
	}
}

// end is the least delayed frame of the last one or two windows.
func (c *Clock) end() clockPoint {
	if c.prev.set && c.prev.before(c.cur) {
		return c.prev
	}
	return c.cur
}

// measurable reports whether the ends of a measurement are known and
// apart.
func (c *Clock) measurable() bool {
	e := c.end()
	return c.base.set && e.set && e.m > c.base.m
}

// pastWindows is how many windows' least delayed frames are kept for the
// middle of a measurement: 20 s with the default span.
const pastWindows = 8

// steady reports whether the rate measured from base to end, off the
// local rate by d, holds in both halves of the span: each half, split at
// the least delayed frame of the window nearest the middle, is off by more
// than half the tolerance in the same direction. A camera whose clock runs
// at another rate is off all along; frames that arrive later from some
// moment on (a congested network, or a camera's first frames given
// decoding times ahead of the others' while its B-frames' reorder delay is
// not known yet) are off across that moment only, by the step of the
// delay over the span, and keep their own rate.
func (c *Clock) steady(end clockPoint, d float64) bool {
	middle := c.base.w.Add(end.w.Sub(c.base.w) / 2)
	var mid clockPoint
	for _, p := range c.past[:c.npast] {
		if p.m <= c.base.m || p.m >= end.m {
			continue
		}
		if !mid.set || absDuration(p.w.Sub(middle)) < absDuration(mid.w.Sub(middle)) {
			mid = p
		}
	}
	if !mid.set {
		return false
	}
	half := c.RateTolerance / 2
	off := func(a, b clockPoint) bool {
		h := float64(b.w.Sub(a.w))/float64(b.m-a.m)/c.rate - 1
		return (d > 0 && h > half) || (d < 0 && h < -half)
	}
	return off(c.base, mid) && off(mid, end)
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
