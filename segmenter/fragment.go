package segmenter

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/vigia/vigia/media"
)

// sample is one finished sample of a fragment: its timing and size; its
// bytes are in the track's data.
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
	data     []byte // the samples' bytes, back to back
}

// Sample flags of trun: non-sync samples are marked, sync samples are not
// (ISO/IEC 14496-12 8.8.3.1).
const (
	flagNonSync         = 1 << 16
	trunFlags           = 0x000001 | 0x000100 | 0x000200 | 0x000400 | 0x000800
	tfhdDefaultBaseMoof = 0x020000
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
	n := 8 + 16 // moof header, mfhd
	for _, t := range tracks {
		n += 8 + 16 + 20 + 8 + 12 + 16*len(t.samples) // traf, tfhd, tfdt (v1), trun header+count+offset, samples
	}
	return n
}

// writeFragment writes one moof+mdat with the given tracks to w.
func writeFragment(w *bufio.Writer, seq uint32, tracks []*fragTrack) (int64, error) {
	var hdr [16]byte
	put := func(b []byte) error { _, err := w.Write(b); return err }
	box := func(size int, typ string) error {
		binary.BigEndian.PutUint32(hdr[0:], uint32(size))
		copy(hdr[4:8], typ)
		return put(hdr[:8])
	}
	u32 := func(v uint32) error {
		binary.BigEndian.PutUint32(hdr[:4], v)
		return put(hdr[:4])
	}
	u64 := func(v uint64) error {
		binary.BigEndian.PutUint64(hdr[:8], v)
		return put(hdr[:8])
	}
	moof := moofSize(tracks)
	var mdat int
	for _, t := range tracks {
		n := 0
		for _, s := range t.samples {
			n += int(s.size)
		}
		if n != len(t.data) {
			return 0, fmt.Errorf("track %d: samples of %d bytes, data of %d", t.id, n, len(t.data))
		}
		mdat += n
	}
	if err := box(moof, "moof"); err != nil {
		return 0, err
	}
	_ = box(16, "mfhd")
	_ = u32(0)
	_ = u32(seq)
	dataOffset := moof + 8
	for _, t := range tracks {
		trunSize := 8 + 12 + 16*len(t.samples)
		_ = box(8+16+20+trunSize, "traf")
		_ = box(16, "tfhd")
		_ = u32(tfhdDefaultBaseMoof)
		_ = u32(t.id)
		_ = box(20, "tfdt")
		_ = u32(1 << 24) // version 1
		_ = u64(t.baseTime)
		_ = box(trunSize, "trun")
		_ = u32(1<<24 | trunFlags) // version 1: signed composition offsets
		_ = u32(uint32(len(t.samples)))
		_ = u32(uint32(dataOffset))
		for _, s := range t.samples {
			flags := uint32(0)
			if !s.sync {
				flags = flagNonSync
			}
			_ = u32(s.dur)
			_ = u32(s.size)
			_ = u32(flags)
			_ = u32(uint32(s.cto))
			dataOffset += int(s.size)
		}
	}
	if err := box(8+mdat, "mdat"); err != nil {
		return 0, err
	}
	for _, t := range tracks {
		_ = put(t.data)
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return int64(moof + 8 + mdat), nil
}

var _ io.Writer = (*bufio.Writer)(nil)
