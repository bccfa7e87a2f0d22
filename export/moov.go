package export

import (
	"encoding/binary"
	"math"
)

// movieTimescale is the timescale of mvhd, tkhd and elst (milliseconds).
const movieTimescale = 1000

// boxWriter appends boxes to a byte slice.
type boxWriter struct {
	b     []byte
	stack []int
}

func (w *boxWriter) start(typ string) {
	w.stack = append(w.stack, len(w.b))
	w.b = append(w.b, 0, 0, 0, 0)
	w.b = append(w.b, typ...)
}

// full starts a full box with version and flags.
func (w *boxWriter) full(typ string, version byte, flags uint32) {
	w.start(typ)
	w.b = append(w.b, version, byte(flags>>16), byte(flags>>8), byte(flags))
}

func (w *boxWriter) end() {
	i := w.stack[len(w.stack)-1]
	w.stack = w.stack[:len(w.stack)-1]
	binary.BigEndian.PutUint32(w.b[i:], uint32(len(w.b)-i))
}

func (w *boxWriter) u16(v uint16) { w.b = binary.BigEndian.AppendUint16(w.b, v) }
func (w *boxWriter) u32(v uint32) { w.b = binary.BigEndian.AppendUint32(w.b, v) }
func (w *boxWriter) u64(v uint64) { w.b = binary.BigEndian.AppendUint64(w.b, v) }
func (w *boxWriter) zeros(n int)  { w.b = append(w.b, make([]byte, n)...) }

var unityMatrix = [9]uint32{0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000}

func (w *boxWriter) matrix() {
	for _, v := range unityMatrix {
		w.u32(v)
	}
}

// toMovie converts track ticks to movie ticks, rounding up.
func toMovie(ticks int64, timescale uint32) uint64 {
	if ticks <= 0 {
		return 0
	}
	return uint64((ticks*movieTimescale + int64(timescale) - 1) / int64(timescale))
}

// header builds ftyp+moov+mdat header for the tracks, with chunk offsets
// moved by the header's own length. co64 selects 64-bit chunk offsets and a
// 64-bit mdat size.
func header(tracks []*outTrack, mediaSize int64, co64 bool) []byte {
	build := func(base int64) []byte {
		w := &boxWriter{}
		w.start("ftyp")
		w.b = append(w.b, "isom"...)
		w.u32(0x200)
		w.b = append(w.b, "isomiso2mp41"...)
		w.end()
		writeMoov(w, tracks, base, co64)
		if co64 {
			w.u32(1)
			w.b = append(w.b, "mdat"...)
			w.u64(uint64(16 + mediaSize))
		} else {
			w.u32(uint32(8 + mediaSize))
			w.b = append(w.b, "mdat"...)
		}
		return w.b
	}
	// Chunk offsets are fixed-width, so the length does not depend on base.
	first := build(0)
	return build(int64(len(first)))
}

// needCo64 reports whether a file of this size needs 64-bit offsets.
func needCo64(headerLen int, mediaSize int64) bool {
	return int64(headerLen)+mediaSize > math.MaxUint32
}

func writeMoov(w *boxWriter, tracks []*outTrack, base int64, co64 bool) {
	var movieDur uint64
	for _, t := range tracks {
		movieDur = max(movieDur, toMovie(t.start, t.timescale)+toMovie(t.mediaDuration(), t.timescale))
	}
	w.start("moov")
	w.full("mvhd", 1, 0)
	w.u64(0) // creation
	w.u64(0) // modification
	w.u32(movieTimescale)
	w.u64(movieDur)
	w.u32(0x00010000) // rate
	w.u16(0x0100)     // volume
	w.zeros(10)
	w.matrix()
	w.zeros(24)
	w.u32(uint32(len(tracks) + 1))
	w.end()
	for i, t := range tracks {
		writeTrak(w, t, uint32(i+1), base, co64)
	}
	w.end()
}

func writeTrak(w *boxWriter, t *outTrack, id uint32, base int64, co64 bool) {
	empty := toMovie(t.start, t.timescale)
	media := toMovie(t.mediaDuration(), t.timescale)
	w.start("trak")
	w.full("tkhd", 1, 3) // enabled, in movie
	w.u64(0)
	w.u64(0)
	w.u32(id)
	w.u32(0)
	w.u64(empty + media)
	w.zeros(8)
	w.u16(0) // layer
	if t.video {
		w.u16(0) // alternate group
		w.u16(0) // volume
	} else {
		w.u16(1)
		w.u16(0x0100)
	}
	w.u16(0)
	w.matrix()
	w.u32(uint32(t.width) << 16)
	w.u32(uint32(t.height) << 16)
	w.end()

	// Edit list: an empty edit for a track that starts after the origin,
	// then the media from its first presentation time.
	w.start("edts")
	if empty > 0 {
		w.full("elst", 1, 0)
		w.u32(2)
		w.u64(empty)
		w.u64(math.MaxUint64) // media_time -1: empty
		w.u32(0x00010000)
	} else {
		w.full("elst", 1, 0)
		w.u32(1)
	}
	w.u64(media)
	w.u64(uint64(max(t.firstCto, 0)))
	w.u32(0x00010000)
	w.end()
	w.end()

	w.start("mdia")
	w.full("mdhd", 1, 0)
	w.u64(0)
	w.u64(0)
	w.u32(t.timescale)
	w.u64(uint64(t.mediaDuration()))
	w.u16(0x55c4) // "und"
	w.u16(0)
	w.end()
	w.full("hdlr", 0, 0)
	w.u32(0)
	if t.video {
		w.b = append(w.b, "vide"...)
		w.zeros(12)
		w.b = append(w.b, "VideoHandler\x00"...)
	} else {
		w.b = append(w.b, "soun"...)
		w.zeros(12)
		w.b = append(w.b, "SoundHandler\x00"...)
	}
	w.end()
	w.start("minf")
	if t.video {
		w.full("vmhd", 0, 1)
		w.zeros(8)
	} else {
		w.full("smhd", 0, 0)
		w.zeros(4)
	}
	w.end()
	w.start("dinf")
	w.full("dref", 0, 0)
	w.u32(1)
	w.full("url ", 0, 1)
	w.end()
	w.end()
	w.end()
	writeStbl(w, t, base, co64)
	w.end() // minf
	w.end() // mdia
	w.end() // trak
}

func writeStbl(w *boxWriter, t *outTrack, base int64, co64 bool) {
	w.start("stbl")
	w.full("stsd", 0, 0)
	w.u32(uint32(len(t.entries)))
	for _, e := range t.entries {
		w.b = append(w.b, e...)
	}
	w.end()

	w.full("stts", 0, 0)
	w.u32(uint32(len(t.stts)))
	for _, e := range t.stts {
		w.u32(e.count)
		w.u32(e.delta)
	}
	w.end()

	if t.video && !t.allSync {
		w.full("stss", 0, 0)
		w.u32(uint32(len(t.stss)))
		for _, n := range t.stss {
			w.u32(n)
		}
		w.end()
	}

	if t.anyCtts {
		v := byte(0)
		if t.negCtts {
			v = 1
		}
		w.full("ctts", v, 0)
		w.u32(uint32(len(t.ctts)))
		for _, e := range t.ctts {
			w.u32(e.count)
			w.u32(uint32(e.offset))
		}
		w.end()
	}

	// stsc: one entry per change of (samples per chunk, description).
	w.full("stsc", 0, 0)
	at := len(w.b)
	w.u32(0)
	var n uint32
	for i, c := range t.chunks {
		if i > 0 && c.count == t.chunks[i-1].count && c.sdi == t.chunks[i-1].sdi {
			continue
		}
		w.u32(uint32(i + 1))
		w.u32(c.count)
		w.u32(c.sdi)
		n++
	}
	binary.BigEndian.PutUint32(w.b[at:], n)
	w.end()

	w.full("stsz", 0, 0)
	w.u32(0)
	w.u32(uint32(len(t.sizes)))
	for _, s := range t.sizes {
		w.u32(s)
	}
	w.end()

	if co64 {
		w.full("co64", 0, 0)
		w.u32(uint32(len(t.chunks)))
		for _, c := range t.chunks {
			w.u64(uint64(base + c.off))
		}
	} else {
		w.full("stco", 0, 0)
		w.u32(uint32(len(t.chunks)))
		for _, c := range t.chunks {
			w.u32(uint32(base + c.off))
		}
	}
	w.end()
	w.end() // stbl
}
