package export

import (
	"bytes"
	"math"
)

// sttsEntry is a run of samples of one duration.
type sttsEntry struct{ count, delta uint32 }

// cttsEntry is a run of samples of one composition offset.
type cttsEntry struct {
	count  uint32
	offset int32
}

// chunk is a run of samples stored one after the other in the output.
type chunk struct {
	off   int64 // offset in the media data
	count uint32
	sdi   uint32 // 1-based sample description index
}

// outTrack is the sample table of one output track, built sample by sample.
//
// Timing: every sample has an ideal decode time (ticks from the clip's
// origin, derived from the segment's wall-clock start). When a sample's
// ideal time is later than where the previous sample ends (a gap between
// segments, or a rounding difference), the previous sample is stretched to
// reach it, so the file's timeline stays wall-clock time and a gap shows as
// the last picture held (and silence). A sample whose ideal time is earlier
// than that end (an overlap) is placed at the end instead.
type outTrack struct {
	video     bool
	timescale uint32
	entries   [][]byte // sample entries, header included

	sizes  []uint32
	stts   []sttsEntry
	ctts   []cttsEntry
	stss   []uint32
	chunks []chunk

	allSync  bool
	anyCtts  bool
	negCtts  bool
	firstCto int32
	width    uint16
	height   uint16

	start    int64 // ticks of the first sample from the origin
	chunkEnd int64 // end offset of the last chunk
	cursor   int64 // ticks where the last sample ends
}

func newOutTrack(video bool, timescale uint32) *outTrack {
	return &outTrack{video: video, timescale: timescale, allSync: true}
}

// entryIndex returns the 1-based index of entry, adding it when new.
func (t *outTrack) entryIndex(entry []byte) uint32 {
	for i, e := range t.entries {
		if bytes.Equal(e, entry) {
			return uint32(i + 1)
		}
	}
	t.entries = append(t.entries, bytes.Clone(entry))
	return uint32(len(t.entries))
}

// n returns the number of samples.
func (t *outTrack) n() int { return len(t.sizes) }

// add appends a sample with ideal decode time ideal (ticks from the origin).
func (t *outTrack) add(ideal int64, dur uint32, size uint32, sync bool, cto int32) {
	if t.n() == 0 {
		t.start = max(ideal, 0)
		t.cursor = t.start
		t.firstCto = cto
	} else if gap := ideal - t.cursor; gap != 0 {
		last := int64(t.stts[len(t.stts)-1].delta) + gap
		if last >= 1 && last <= math.MaxUint32 {
			t.setLastDur(uint32(last))
			t.cursor = ideal
		}
	}
	if dur == 0 {
		dur = 1
	}
	if n := len(t.stts); n > 0 && t.stts[n-1].delta == dur {
		t.stts[n-1].count++
	} else {
		t.stts = append(t.stts, sttsEntry{1, dur})
	}
	t.cursor += int64(dur)
	if n := len(t.ctts); n > 0 && t.ctts[n-1].offset == cto {
		t.ctts[n-1].count++
	} else {
		t.ctts = append(t.ctts, cttsEntry{1, cto})
	}
	if cto != 0 {
		t.anyCtts = true
	}
	if cto < 0 {
		t.negCtts = true
	}
	t.sizes = append(t.sizes, size)
	if sync {
		t.stss = append(t.stss, uint32(t.n()))
	} else {
		t.allSync = false
	}
}

// setLastDur changes the duration of the last sample.
func (t *outTrack) setLastDur(d uint32) {
	n := len(t.stts)
	last := &t.stts[n-1]
	t.cursor += int64(d) - int64(last.delta)
	if last.count == 1 {
		last.delta = d
		if n > 1 && t.stts[n-2].delta == d {
			t.stts[n-2].count++
			t.stts = t.stts[:n-1]
		}
		return
	}
	last.count--
	t.stts = append(t.stts, sttsEntry{1, d})
}

// endAt shortens the last sample so the track ends at ticks, when it ends later.
func (t *outTrack) endAt(ticks int64) {
	if t.n() == 0 || t.cursor <= ticks {
		return
	}
	last := int64(t.stts[len(t.stts)-1].delta)
	t.setLastDur(uint32(max(last-(t.cursor-ticks), 1)))
}

// addChunk records that the next count samples, size bytes in all, are
// stored at off; a chunk that continues the previous one is merged into it.
func (t *outTrack) addChunk(off int64, count uint32, size int64, sdi uint32) {
	if n := len(t.chunks); n > 0 && t.chunks[n-1].sdi == sdi && t.chunkEnd == off {
		t.chunks[n-1].count += count
	} else {
		t.chunks = append(t.chunks, chunk{off: off, count: count, sdi: sdi})
	}
	t.chunkEnd = off + size
}

// mediaDuration returns the sum of the sample durations, in track ticks.
func (t *outTrack) mediaDuration() int64 { return t.cursor - t.start }
