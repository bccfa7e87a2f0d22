package segmenter

import (
	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4"

	"github.com/vigia/vigia/media"
)

// trackState is one track of the open segment: the sample waiting for its
// duration (known when the next sample arrives) and the samples of the
// fragment being built.
type trackState struct {
	id        int
	timescale int64

	pending      *media.Unit
	pendingTicks int64 // absolute ticks of pending.DTS

	samples  []*fmp4.Sample
	fragBase int64 // segment-relative ticks of samples[0]
	next     int64 // segment-relative ticks after the last finished sample
	segBase  int64 // absolute ticks of the segment start
	lastDur  uint32
	defDur   uint32 // duration used when none is known
	started  bool
}

// finish gives the pending sample the duration up to absTicks and moves it
// into the fragment.
func (t *trackState) finish(absTicks int64, build func(u *media.Unit, ptsOffset int32) (*fmp4.Sample, error)) error {
	if t.pending == nil {
		return nil
	}
	d := absTicks - t.pendingTicks
	if d <= 0 || d > int64(^uint32(0)>>1) {
		d = int64(t.lastDur)
		if d == 0 {
			d = int64(t.defDur)
		}
	}
	u := t.pending
	ptsOff := int32(toTicks(u.PTS-u.DTS, t.timescale))
	s, err := build(u, ptsOff)
	if err != nil {
		t.pending = nil
		return err
	}
	t.pending = nil
	s.Duration = uint32(d)
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
	return nil
}

// take returns the fragment's samples and empties it.
func (t *trackState) take() *fmp4.PartTrack {
	if len(t.samples) == 0 {
		return nil
	}
	pt := &fmp4.PartTrack{ID: t.id, BaseTime: uint64(t.fragBase), Samples: t.samples}
	t.samples = nil
	return pt
}
