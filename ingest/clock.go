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
//     mapping at the local clock: the output goes on without a step (not
//     when the video's delay crept there while the camera's other track
//     maps within half of JumpAfter of its arrivals: the video is late,
//     the clock did not jump);
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
// keeps its own timestamps untouched (only shifted).
//
// The camera's other track (its sound, Other) is mapped with the same
// mapping, and a media time is mapped to the same output whichever track
// asks and whenever: a new rate applies from the furthest media time
// mapped so far, so sound that arrived before the video of its time (the
// video's encoding takes longer) keeps the output it was given, and the
// video of that time gets it too. Its arrivals are a second witness of the
// camera's clock: when the video's frames seem to run at another rate but
// the sound's packets arrive at the local rate, the camera's clock is
// right and the video's delay changed (an encoder falling behind, frames
// queued), and nothing is scaled. Clock is not safe for concurrent use.
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
	lastLag time.Duration // the last video frame's arrival less its output
	evalAt  time.Time     // last rate evaluation

	// The mapping before the current one, by media time: the current one
	// (mA, oA, rate) applies from from on, older ones below, newest first.
	from    time.Duration
	earlier []clockSegment
	// The furthest media time mapped, by any track.
	furthest time.Duration

	// The least delayed packets of the other track (Other): of the first
	// window after the anchor, of the window running and of the one
	// before; and the arrival of its last packet, with how far its output
	// was behind it.
	other    clockWitness
	otherAt  time.Time
	otherLag time.Duration

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
		c.mA, c.oA, c.rate, c.from = pts, 0, 1, pts
		c.lastO = 0
		c.furthest = pts
		c.other.reset(now)
		return 0
	}
	o := c.out(pts)
	target := now.Sub(c.wall0)
	lag := target - o
	late := absDuration(lag-c.lastLag) < c.JumpAfter/2 && c.otherOnTime(now)
	if (lag > c.JumpAfter || (lag < -c.JumpAfter && target >= c.lastO)) && !late {
		// The camera's clock jumped: go on from the local clock.
		c.mA, c.oA, c.from, c.earlier = pts, target, pts, c.earlier[:0]
		c.furthest = pts
		c.anchor(now)
		c.jumps++
		o = target
	} else {
		c.observe(pts, now)
	}
	c.furthest = max(c.furthest, pts)
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
		if (off || c.rate != 1) && c.otherAtLocalRate() {
			// The other track's packets arrive at the local rate: the
			// camera's clock is right, the video's delay changed. Its
			// timestamps are kept (back to them after a correction).
			if c.rate != 1 {
				c.remap(pts, 1)
				c.anchor(now)
				c.corrections++
			}
			off = false
		} else if off || c.rate != 1 {
			// Scale to the measured rate and absorb the offset built up
			// over the next span; a camera back to the local rate gets 1.
			rate := measured
			if rd := measured - 1; rd <= c.RateTolerance && rd >= -c.RateTolerance {
				rate = 1
			}
			adj := 1 + float64(lag)/float64(c.RateSpan)
			adj = min(max(adj, 0.5), 1.5)
			if rate != 1 || lag > c.JumpAfter/4 || lag < -c.JumpAfter/4 {
				rate *= adj
			}
			c.remap(pts, rate)
			c.anchor(now)
			c.corrections++
		}
	}
	if o > c.lastO {
		c.lastO = o
	}
	c.lastLag = target - o
	return o
}

// Map maps a timestamp (a video frame's presentation time, or another
// track's) without updating the mapping.
func (c *Clock) Map(pts time.Duration) time.Duration {
	if !c.started {
		return 0
	}
	c.furthest = max(c.furthest, pts)
	return c.out(pts)
}

// Other maps the timestamp of a packet of the camera's other track (its
// sound) that arrived at now, on the video's media axis, and notes its
// arrival: a second witness of the camera's clock rate. Give it one track
// only. Before the first video frame it returns 0.
func (c *Clock) Other(pts time.Duration, now time.Time) time.Duration {
	if !c.started {
		return 0
	}
	c.other.observe(clockPoint{m: pts, w: now, set: true}, now, c.window())
	o := c.Map(pts)
	c.otherAt, c.otherLag = now, now.Sub(c.wall0)-o
	return o
}

// otherOnTime reports whether the other track's last packet, arrived
// within a window of now, was mapped within half of JumpAfter of its
// arrival: the camera's clock did not jump, whatever the video's delay.
func (c *Clock) otherOnTime(now time.Time) bool {
	return !c.otherAt.IsZero() && now.Sub(c.otherAt) < c.window() &&
		absDuration(c.otherLag) <= c.JumpAfter/2
}

// OtherMoved tells the clock that the other track was moved on the media
// axis at now (placed anew against the video): its arrivals before no
// longer witness the camera's rate.
func (c *Clock) OtherMoved(now time.Time) { c.other.reset(now) }

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
	if pts < c.from {
		for i, g := range c.earlier {
			if pts >= g.from || i == len(c.earlier)-1 {
				return g.out(pts)
			}
		}
	}
	return clockSegment{m: c.mA, o: c.oA, rate: c.rate}.out(pts)
}

// remap makes rate the output rate from the furthest media time mapped on
// (video frame pts or later): what was mapped keeps its output.
func (c *Clock) remap(pts time.Duration, rate float64) {
	at := max(pts, c.furthest)
	o := c.out(at)
	if len(c.earlier) == maxSegments {
		c.earlier = c.earlier[:maxSegments-1]
	}
	c.earlier = append(c.earlier, clockSegment{})
	copy(c.earlier[1:], c.earlier)
	c.earlier[0] = clockSegment{m: c.mA, o: c.oA, rate: c.rate, from: c.from}
	c.mA, c.oA, c.rate, c.from = at, o, rate, at
}

// maxSegments bounds the earlier mappings kept: each lasts at least half
// a span, and only media times the video has not reached yet (the sound's
// lead over it) need them.
const maxSegments = 8

// clockSegment is a linear mapping of media time to output time, from
// media time from on.
type clockSegment struct {
	m, o, from time.Duration
	rate       float64
}

func (g clockSegment) out(pts time.Duration) time.Duration {
	d := pts - g.m
	if g.rate == 1 {
		return g.o + d
	}
	return g.o + time.Duration(float64(d)*g.rate)
}

// anchor starts a new measurement at now.
func (c *Clock) anchor(now time.Time) {
	c.wA, c.evalAt = now, now
	c.base, c.cur, c.prev, c.winAt = clockPoint{}, clockPoint{}, clockPoint{}, now
	c.npast = 0
	c.other.reset(now)
}

// otherAtLocalRate reports whether the other track's least delayed
// packets, near both ends of the span, arrived at the local clock's rate
// (within half the tolerance) over at least half a span.
func (c *Clock) otherAtLocalRate() bool {
	w := &c.other
	end := w.end()
	if !w.base.set || !end.set || end.w.Sub(w.base.w) < c.RateSpan/2 || end.m <= w.base.m {
		return false
	}
	d := float64(end.w.Sub(w.base.w))/float64(end.m-w.base.m) - 1
	return d <= c.RateTolerance/2 && d >= -c.RateTolerance/2
}

// clockWitness keeps the least delayed packets of a track: of the first
// window after since (base), of the window running (cur) and of the one
// before (prev).
type clockWitness struct {
	base, cur, prev clockPoint
	since, winAt    time.Time
}

func (w *clockWitness) reset(now time.Time) {
	*w = clockWitness{since: now, winAt: now}
}

// observe notes p, arrived at now.
func (w *clockWitness) observe(p clockPoint, now time.Time, window time.Duration) {
	if now.Sub(w.winAt) >= window {
		w.prev, w.cur, w.winAt = w.cur, clockPoint{}, now
	}
	if p.before(w.cur) {
		w.cur = p
	}
	if now.Sub(w.since) < window && p.before(w.base) {
		w.base = p
	}
}

// end is the least delayed packet of the last one or two windows.
func (w *clockWitness) end() clockPoint {
	if w.prev.set && w.prev.before(w.cur) {
		return w.prev
	}
	return w.cur
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
