package segmenter

import "time"

// trackState is one track of the open segment: the sample waiting for its
// duration (known when the next sample arrives) and the finished samples
// not yet in a written fragment. Only sample metadata is kept here: video
// bytes are in the spool file already, audio bytes in the writer's audio
// buffer.
type trackState struct {
	id        int
	timescale int64
	video     bool

	pending      bool
	pendingTicks int64         // absolute ticks of the pending sample's DTS
	pendingDTS   time.Duration // its DTS
	pendingCTO   int32
	pendingSync  bool
	pendingSize  uint32

	samples  []sample
	fragBase int64 // segment-relative ticks of samples[0]
	next     int64 // segment-relative ticks after the last finished sample
	segBase  int64 // absolute ticks of the segment start
	lastDur  uint32
	defDur   uint32 // duration used when none is known
	started  bool
}

// hold makes a sample the pending one, waiting for its duration.
func (t *trackState) hold(absTicks int64, dts time.Duration, cto int32, sync bool, size uint32) {
	t.pending = true
	t.pendingTicks, t.pendingDTS = absTicks, dts
	t.pendingCTO, t.pendingSync, t.pendingSize = cto, sync, size
}

// finish gives the pending sample the duration up to absTicks and adds it
// to the finished samples.
func (t *trackState) finish(absTicks int64) {
	if !t.pending {
		return
	}
	t.pending = false
	d := absTicks - t.pendingTicks
	if d <= 0 || d > int64(^uint32(0)>>1) {
		d = int64(t.lastDur)
		if d == 0 {
			d = int64(t.defDur)
		}
	}
	if !t.started {
		t.started = true
		if off := t.pendingTicks - t.segBase; off > 0 {
			t.next = off
		}
	}
	if len(t.samples) == 0 {
		t.fragBase = t.next
	}
	t.samples = append(t.samples, sample{dur: uint32(d), cto: t.pendingCTO, sync: t.pendingSync, size: t.pendingSize})
	t.next += d
	t.lastDur = uint32(d)
}

// take moves the first n finished samples into into, keeping the slices'
// storage for the next fragment, and reports whether there were any. The
// samples after them stay for the next fragment.
func (t *trackState) take(into *fragTrack, n int) bool {
	n = min(n, len(t.samples))
	if n <= 0 {
		return false
	}
	into.id = uint32(t.id)
	into.baseTime = uint64(t.fragBase)
	into.samples = append(into.samples[:0], t.samples[:n]...)
	into.bytes = 0
	for _, s := range into.samples {
		into.bytes += int64(s.size)
		t.fragBase += int64(s.dur)
	}
	t.samples = t.samples[:copy(t.samples, t.samples[n:])]
	return true
}
