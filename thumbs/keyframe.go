package thumbs

import (
	"time"

	"github.com/vigia/vigia/media"
)

// keyframe is what a camera keeps of its newest keyframe for snapshots:
// where the segmenter stored it, not the unit (whose memory is reused once
// the consumers return). About 100 bytes; a keyframe that was not recorded
// is copied instead (rare: no parameter sets yet, a spool write error).
type keyframe struct {
	// id counts the camera's keyframes from 1 (0: none yet): the same id,
	// the same picture, the same snapshot.
	id    uint64
	t     time.Time
	codec media.Codec

	// stored is where the keyframe is in its segment's spool file,
	// readable until that segment ends (at a later keyframe).
	stored media.Stored
	// nalus is a copy of a keyframe that was not stored; nil otherwise.
	nalus [][]byte
}

// newKeyframe notes keyframe u of codec taken at t, without keeping u's
// memory.
func newKeyframe(u *media.Unit, codec media.Codec, t time.Time) keyframe {
	k := keyframe{t: t, codec: codec, stored: u.Stored}
	if !u.Stored.Valid() {
		k.nalus = media.CloneNALUs(u.NALUs)
	}
	return k
}

// load returns the keyframe's NAL units: its copy, or read back from the
// spool file, which fails once the segment has ended.
func (k *keyframe) load() ([][]byte, error) {
	if k.nalus != nil {
		return k.nalus, nil
	}
	return k.stored.NALUs()
}
