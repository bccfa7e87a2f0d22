package segmenter

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/vigia/vigia/media"
)

// sample is one finished sample of a fragment: its timing and size; its
// bytes are in the spool file (video) or the writer's audio buffer.
type sample struct {
	dur  uint32
	cto  int32
	sync bool
	size uint32 // payload bytes in mdat
}

// fragTrack is one track's part of a fragment.
type fragTrack struct {
	id       uint32
	baseTime uint64
	samples  []sample
	bytes    int64 // the samples' bytes in mdat, back to back
}

// Sample flags of trun: non-sync samples are marked, sync samples are not
// (ISO/IEC 14496-12 8.8.3.1).
const (
	flagNonSync         = 1 << 16
	trunFlags           = 0x000001 | 0x000100 | 0x000200 | 0x000400 | 0x000800
	tfhdDefaultBaseMoof = 0x020000
)

// Sizes of the boxes of a moof as written here: every one is a multiple of
// 8 bytes, so a header region whose size is a multiple of 8 always leaves
// padding of 0 or at least 8 bytes, room for a free box.
const (
	moofFixedSize  = 8 + 16               // moof header, mfhd
	trafFixedSize  = 8 + 16 + 20 + 8 + 12 // traf, tfhd, tfdt (v1), trun header+count+offset
	trunEntrySize  = 16                   // duration, size, flags, composition offset
	boxHeaderSize  = 8                    // size and type
	maxMdatPayload = math.MaxUint32 - 8   // a 32-bit mdat size
)

// videoSize is the AVCC size of a video unit: a 4-byte length before each
// NAL unit.
func videoSize(u *media.Unit) uint32 {
	n := 0
	for _, nalu := range u.NALUs {
		n += 4 + len(nalu)
	}
	return uint32(n)
}

// moofSize is the byte size of the moof box for these tracks.
func moofSize(tracks []*fragTrack) int {
	n := moofFixedSize
	for _, t := range tracks {
		n += trafFixedSize + trunEntrySize*len(t.samples)
	}
	return n
}

// appendHeader appends to b the header region of a fragment, reserve bytes
// long: the moof, a free box filling what the moof leaves of the region,
// and the header of an mdat holding the tracks' samples back to back (the
// first track's right after the region). trun data offsets count from the
// start of the moof (default-base-is-moof).
func appendHeader(b []byte, seq uint32, tracks []*fragTrack, reserve int) ([]byte, error) {
	moof := moofSize(tracks)
	pad := reserve - moof - boxHeaderSize
	if pad < 0 || (pad > 0 && pad < boxHeaderSize) {
		return b, fmt.Errorf("fragment header of %d bytes does not fit a reserve of %d", moof+boxHeaderSize, reserve)
	}
	var data int64
	for _, t := range tracks {
		data += t.bytes
	}
	if data > maxMdatPayload || int64(reserve)+data > math.MaxUint32 {
		return b, fmt.Errorf("fragment of %d bytes of media: too large for an mdat", data)
	}
	u32 := binary.BigEndian.AppendUint32
	boxHdr := func(b []byte, size int, typ string) []byte {
		return append(u32(b, uint32(size)), typ...)
	}
	b = boxHdr(b, moof, "moof")
	b = boxHdr(b, 16, "mfhd")
	b = u32(b, 0)
	b = u32(b, seq)
	dataOffset := int64(reserve)
	for _, t := range tracks {
		trunSize := 8 + 12 + trunEntrySize*len(t.samples)
		b = boxHdr(b, 8+16+20+trunSize, "traf")
		b = boxHdr(b, 16, "tfhd")
		b = u32(b, tfhdDefaultBaseMoof)
		b = u32(b, t.id)
		b = boxHdr(b, 20, "tfdt")
		b = u32(b, 1<<24) // version 1
		b = binary.BigEndian.AppendUint64(b, t.baseTime)
		b = boxHdr(b, trunSize, "trun")
		b = u32(b, 1<<24|trunFlags) // version 1: signed composition offsets
		b = u32(b, uint32(len(t.samples)))
		b = u32(b, uint32(dataOffset))
		for _, s := range t.samples {
			flags := uint32(0)
			if !s.sync {
				flags = flagNonSync
			}
			b = u32(b, s.dur)
			b = u32(b, s.size)
			b = u32(b, flags)
			b = u32(b, uint32(s.cto))
		}
		dataOffset += t.bytes
	}
	if pad > 0 {
		b = boxHdr(b, pad, "free")
		b = append(b, make([]byte, pad-boxHeaderSize)...)
	}
	return boxHdr(b, boxHeaderSize+int(data), "mdat"), nil
}
