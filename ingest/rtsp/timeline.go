package rtsp

import (
	"time"

	"github.com/vigia/vigia/ingest"
)

// unwrapper turns a track's 32-bit RTP timestamps into a continuous count
// of ticks: each step is the signed 32-bit difference to the last one, so
// the wrap at 2^32 is invisible. A step longer than maxStep either way is
// a jump of the camera's clock: the count goes on one frame after the
// furthest point it had reached, so what follows (decoding times, the
// session's clock) never sees the jump. Steps are taken in arrival
// (decoding) order, in which the timestamps of B-frames go back and forth
// by a few frames: far less than maxStep.
type unwrapper struct {
	prev    uint32
	ticks   int64
	maxStep int64

	first   int64 // ticks of the first timestamp
	horizon int64 // the furthest ticks reached
	n       int64 // timestamps counted
}

func newUnwrapper(ts uint32, start int64, rate int) *unwrapper {
	return &unwrapper{prev: ts, ticks: start, first: start, horizon: start, n: 1,
		maxStep: durationToTicks(ingest.DefaultJumpAfter, rate)}
}

func (u *unwrapper) next(ts uint32) int64 {
	d := int64(int32(ts - u.prev))
	u.prev = ts
	if d > u.maxStep || d < -u.maxStep {
		d = u.horizon + u.frame() - u.ticks
	}
	u.ticks += d
	u.horizon = max(u.horizon, u.ticks)
	u.n++
	return u.ticks
}

// frame is the mean advance per timestamp so far (at least one tick).
func (u *unwrapper) frame() int64 {
	if u.n < 2 {
		return 1
	}
	return max((u.horizon-u.first)/(u.n-1), 1)
}

// timeline puts the tracks of a session on one time axis, as gortsplib's
// global decoder does: the video track starts at zero; another track
// starts, at its first packet, where the video stands then (the video time
// of its last keyframe plus the wall time since), and follows its own RTP
// clock after that.
type timeline struct {
	video      *unwrapper
	anchorAt   time.Time // arrival of the last video keyframe
	anchorTick int64     // its video ticks (90 kHz)
	others     map[int]*unwrapper
}

// videoTicks unwraps a video timestamp; keyframes move the anchor.
func (t *timeline) videoTicks(ts uint32, key bool, now time.Time) int64 {
	var v int64
	if t.video == nil {
		t.video = newUnwrapper(ts, 0, 90000)
	} else {
		v = t.video.next(ts)
	}
	if key || t.anchorAt.IsZero() {
		t.anchorAt, t.anchorTick = now, v
	}
	return v
}

// started reports whether video has started the axis.
func (t *timeline) started() bool { return t.video != nil }

// otherTicks unwraps a timestamp of track idx, whose clock runs at rate.
// Call it only after video started.
func (t *timeline) otherTicks(idx int, ts uint32, rate int, now time.Time) int64 {
	u := t.others[idx]
	if u == nil {
		if t.others == nil {
			t.others = map[int]*unwrapper{}
		}
		start := t.anchorTick*int64(rate)/90000 + durationToTicks(now.Sub(t.anchorAt), rate)
		t.others[idx] = newUnwrapper(ts, start, rate)
		return start
	}
	return u.next(ts)
}
