package motion

import (
	"errors"
	"time"

	"github.com/vigia/vigia/media"
)

// frame is what the detector keeps of a video unit once the unit's Unit
// call has returned (the pipeline reuses the unit's memory): its time, its
// size, whether it is a keyframe, and where to find its NAL units when it
// is decoded. Those are read back from the spool file where the segmenter
// stored the unit (stored), or, for a unit that was not stored (not
// recorded: before the first keyframe, no parameter sets, a spool write
// error), taken from a copy (nalus). 96 bytes, plus the copy.
type frame struct {
	t      time.Time
	stored media.Stored
	nalus  [][]byte // a copy of a unit not stored
	size   int      // bytes of NAL units (the trigger's measure)
	key    bool
}

// errNotKept means a frame's NAL units were neither stored nor copied.
var errNotKept = errors.New("frame was neither stored nor copied")

// newFrame describes u. When u was not stored and keep is set, its NAL
// units are copied; otherwise a frame of a unit not stored has no NAL
// units (the detector will not decode it).
func newFrame(u *media.Unit, keep bool) frame {
	f := frame{t: u.Time, stored: u.Stored, size: u.Size(), key: u.Key}
	if !u.Stored.Valid() && keep {
		f.nalus = media.CloneNALUs(u.NALUs)
	}
	return f
}

// load returns the frame's NAL units: its copy, or read back from the
// spool file, which fails once the unit's segment has ended.
func (f *frame) load() ([][]byte, error) {
	switch {
	case f.nalus != nil:
		return f.nalus, nil
	case f.stored.Valid():
		return f.stored.NALUs()
	}
	return nil, errNotKept
}
