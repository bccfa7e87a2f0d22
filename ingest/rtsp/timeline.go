package rtsp

import "time"

// unwrapper turns a track's 32-bit RTP timestamps into a continuous count
// of ticks: each step is the signed 32-bit difference to the last one, so
// the wrap at 2^32 is invisible.
type unwrapper struct {
	started bool
	prev    uint32
	ticks   int64
}

func (u *unwrapper) next(ts uint32) int64 {
	u.ticks += int64(int32(ts - u.prev))
	u.prev = ts
	return u.ticks
}

// timeline puts the tracks of a session on one time axis, as gortsplib's
// global decoder does: the video track starts at zero; another track
// starts, at its first packet, where the video stands then (the video time
// of its last keyframe plus the wall time since), and follows its own RTP
// clock after that.
type timeline struct {
	video      unwrapper
	anchorAt   time.Time // arrival of the last video keyframe
	anchorTick int64     // its video ticks (90 kHz)
	others     map[int]*unwrapper
}

// videoTicks unwraps a video timestamp; keyframes move the anchor.
func (t *timeline) videoTicks(ts uint32, key bool, now time.Time) int64 {
	if !t.video.started {
		t.video = unwrapper{started: true, prev: ts}
	}
	v := t.video.next(ts)
	if key || t.anchorAt.IsZero() {
		t.anchorAt, t.anchorTick = now, v
	}
	return v
}

// started reports whether video has started the axis.
func (t *timeline) started() bool { return t.video.started }

// otherTicks unwraps a timestamp of track idx, whose clock runs at rate.
// Call it only after video started.
func (t *timeline) otherTicks(idx int, ts uint32, rate int, now time.Time) int64 {
	u := t.others[idx]
	if u == nil {
		if t.others == nil {
			t.others = map[int]*unwrapper{}
		}
		start := t.anchorTick*int64(rate)/90000 + durationToTicks(now.Sub(t.anchorAt), rate)
		u = &unwrapper{started: true, prev: ts, ticks: start}
		t.others[idx] = u
	}
	return u.next(ts)
}
