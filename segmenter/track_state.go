package segmenter

import (
	"github.com/vigia/vigia/media"
)

// trackState is one track of the open segment: the sample waiting for its
// duration (known when the next sample arrives) and the samples of the
// fragment being built.
type trackState struct {
	id        int
	timescale int64
	video     bool

	pending      *media.Unit
	pendingTicks int64 // absolute ticks of pending.DTS

	// data holds the media of samples, back to back; a finished sample's
	// unit is not kept.
	data *payloadBuf

	samples  []sample
	fragBase int64 // segment-relative ticks of samples[0]
	next     int64 // segment-relative ticks after the last finished sample
	segBase  int64 // absolute ticks of the segment start
	lastDur  uint32
	defDur   uint32 // duration used when none is known
	started  bool
}

// finish gives the pending sample the duration up to absTicks and moves it
// into the fragment.
func (t *trackState) finish(absTicks int64) {
	if t.pending == nil {
		return
	}
	d := absTicks - t.pendingTicks
	if d <= 0 || d > int64(^uint32(0)>>1) {
		d = int64(t.lastDur)
		if d == 0 {
			d = int64(t.defDur)
		}
	}
	u := t.pending
	t.pending = nil
	s := sample{dur: uint32(d), sync: true}
	if t.video {
		s.cto = int32(toTicks(u.PTS-u.DTS, t.timescale))
		s.sync = u.Key
		s.size = videoSize(u)
		t.data.appendAVCC(u.NALUs)
	} else {
		s.size = uint32(len(u.Payload))
		t.data.append(u.Payload)
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
	t.samples = append(t.samples, s)
	t.next += d
	t.lastDur = uint32(d)
}

// take returns the fragment's samples and empties it, keeping the slice's
// storage for the next fragment. into.data stays valid until the track's
// data buffer is reset.
func (t *trackState) take(into *fragTrack) bool {
	if len(t.samples) == 0 {
		return false
	}
	into.id = uint32(t.id)
	into.baseTime = uint64(t.fragBase)
	into.samples = append(into.samples[:0], t.samples...)
	into.data = t.data.bytes()
	t.samples = t.samples[:0]
	return true
}
