package decodeproc

import (
	"bufio"
	"encoding/binary"
	"fmt"

	"github.com/vigia/vigia/media"
)

// ImageFormat is the form of the picture a Result carries.
type ImageFormat uint8

// Image formats.
const (
	// NoImage asks for no picture.
	NoImage ImageFormat = iota
	// JPEG asks for the picture encoded as a JPEG (Request.Quality).
	JPEG
	// YCbCr asks for the picture raw, full-range 4:2:0.
	YCbCr
)

// Request asks a decoder process to decode a run of access units and
// return what the caller needs of the pictures: luma planes for motion
// analysis, the last picture as a JPEG or raw. Each request starts from a
// reset decoder: nothing carries over from one request to the next.
type Request struct {
	// Codec is media.H264 or media.H265.
	Codec media.Codec

	// Fast decodes without the deblocking filter (decoder.Options.Fast):
	// for motion analysis, not for pictures shown to people.
	Fast bool

	// Still decodes each unit alone (decoder.DecodeStill): a keyframe with
	// its parameter sets in-band gives its picture whatever the stream's
	// reordering.
	Still bool

	// Units are access units in decoding order, each its NAL units without
	// start codes. The Pool only reads them.
	Units [][][]byte

	// GrayWidth is the width of the luma planes asked for (see
	// decoder.ScaledSize; 0 keeps the picture's size).
	GrayWidth int

	// GrayFirst asks for the luma of the first unit's picture, when that
	// unit gave one; GrayLast for the luma of the last picture decoded.
	GrayFirst, GrayLast bool

	// Image asks for the last picture decoded, at ImageWidth (0: full
	// size), as a JPEG of Quality (1 to 100) or raw.
	Image      ImageFormat
	ImageWidth int
	Quality    int
}

// Request flags on the wire.
const (
	flagFast      = 1 << 0
	flagStill     = 1 << 1
	flagGrayFirst = 1 << 2
	flagGrayLast  = 1 << 3
	flagsKnown    = flagFast | flagStill | flagGrayFirst | flagGrayLast
)

// Codecs on the wire.
const (
	codecH264 = 1
	codecH265 = 2
)

// The payload of a decode frame:
//
//	u8  codec          1 H.264, 2 H.265
//	u8  flags          fast, still, gray first, gray last
//	u16 gray width
//	u8  image format   0 none, 1 JPEG, 2 YCbCr
//	u8  quality        1 to 100 for a JPEG, else 0
//	u16 image width
//	u32 units          1 to MaxUnits
//	then per unit:  u16 NAL units (1 to MaxNALUs), then per NAL unit: u32 size, bytes
const requestFixed = 12

// check reports whether r can be sent, with the payload size.
func (r *Request) check() (int, error) {
	if _, ok := wireCodec(r.Codec); !ok {
		return 0, fmt.Errorf("%w: codec %q", ErrBadRequest, r.Codec)
	}
	switch {
	case len(r.Units) == 0 || len(r.Units) > MaxUnits:
		return 0, fmt.Errorf("%w: %d access units (1 to %d)", ErrBadRequest, len(r.Units), MaxUnits)
	case r.GrayWidth < 0 || r.GrayWidth > MaxSide || r.ImageWidth < 0 || r.ImageWidth > MaxSide:
		return 0, fmt.Errorf("%w: width past %d", ErrBadRequest, MaxSide)
	case r.Image > YCbCr:
		return 0, fmt.Errorf("%w: image format %d", ErrBadRequest, r.Image)
	case r.Image == JPEG && (r.Quality < 1 || r.Quality > 100):
		return 0, fmt.Errorf("%w: JPEG quality %d (1 to 100)", ErrBadRequest, r.Quality)
	}
	n := requestFixed
	for _, u := range r.Units {
		if len(u) == 0 || len(u) > MaxNALUs {
			return 0, fmt.Errorf("%w: access unit of %d NAL units (1 to %d)", ErrBadRequest, len(u), MaxNALUs)
		}
		n += 2
		for _, nalu := range u {
			n += 4 + len(nalu)
			if n > MaxPayload {
				return 0, fmt.Errorf("%w: access units past %d bytes", ErrTooLarge, MaxPayload)
			}
		}
	}
	return n, nil
}

func wireCodec(c media.Codec) (uint8, bool) {
	switch c {
	case media.H264:
		return codecH264, true
	case media.H265:
		return codecH265, true
	}
	return 0, false
}

// writeRequest writes r as a decode frame of id, straight from the units'
// memory.
func writeRequest(w *bufio.Writer, id uint32, r *Request) error {
	size, err := r.check()
	if err != nil {
		return err
	}
	codec, _ := wireCodec(r.Codec)
	var flags uint8
	for _, f := range []struct {
		on  bool
		bit uint8
	}{{r.Fast, flagFast}, {r.Still, flagStill}, {r.GrayFirst, flagGrayFirst}, {r.GrayLast, flagGrayLast}} {
		if f.on {
			flags |= f.bit
		}
	}
	quality := 0
	if r.Image == JPEG {
		quality = r.Quality
	}
	b := make([]byte, 0, headerSize+requestFixed)
	b = appendHeader(b, frameDecode, id, size)
	b = append(b, codec, flags)
	b = binary.BigEndian.AppendUint16(b, uint16(r.GrayWidth))
	b = append(b, uint8(r.Image), uint8(quality))
	b = binary.BigEndian.AppendUint16(b, uint16(r.ImageWidth))
	b = binary.BigEndian.AppendUint32(b, uint32(len(r.Units)))
	if _, err := w.Write(b); err != nil {
		return err
	}
	var scratch [4]byte
	for _, u := range r.Units {
		if _, err := w.Write(binary.BigEndian.AppendUint16(scratch[:0], uint16(len(u)))); err != nil {
			return err
		}
		for _, nalu := range u {
			if _, err := w.Write(binary.BigEndian.AppendUint32(scratch[:0], uint32(len(nalu)))); err != nil {
				return err
			}
			if _, err := w.Write(nalu); err != nil {
				return err
			}
		}
	}
	return w.Flush()
}

// parseRequest parses the payload of a decode frame. The request's NAL
// units alias payload.
func parseRequest(payload []byte) (*Request, error) {
	p := parser{b: payload}
	r := &Request{}
	switch p.u8() {
	case codecH264:
		r.Codec = media.H264
	case codecH265:
		r.Codec = media.H265
	default:
		p.fail("unknown codec")
	}
	flags := p.u8()
	if flags&^flagsKnown != 0 {
		p.fail("unknown flags %#x", flags)
	}
	r.Fast, r.Still = flags&flagFast != 0, flags&flagStill != 0
	r.GrayFirst, r.GrayLast = flags&flagGrayFirst != 0, flags&flagGrayLast != 0
	r.GrayWidth = int(p.u16())
	r.Image = ImageFormat(p.u8())
	r.Quality = int(p.u8())
	r.ImageWidth = int(p.u16())
	units := int(p.u32())
	switch {
	case r.GrayWidth > MaxSide || r.ImageWidth > MaxSide:
		p.fail("width past %d", MaxSide)
	case r.Image > YCbCr:
		p.fail("image format %d", r.Image)
	case r.Image == JPEG && (r.Quality < 1 || r.Quality > 100):
		p.fail("JPEG quality %d", r.Quality)
	case r.Image != JPEG && r.Quality != 0:
		p.fail("quality without a JPEG")
	case units == 0 || units > MaxUnits:
		p.fail("%d access units (1 to %d)", units, MaxUnits)
	}
	if p.err != nil {
		return nil, p.err
	}
	// Each unit takes at least 6 bytes: the slices below are bounded by
	// the payload, not by the counts it announces.
	r.Units = make([][][]byte, 0, min(units, len(p.b)/6))
	for range units {
		n := int(p.u16())
		if p.err == nil && (n == 0 || n > MaxNALUs) {
			p.fail("access unit of %d NAL units (1 to %d)", n, MaxNALUs)
		}
		if p.err != nil {
			return nil, p.err
		}
		u := make([][]byte, 0, min(n, len(p.b)/4))
		for range n {
			size := p.u32()
			if p.err == nil && uint64(size) > uint64(len(p.b)) {
				p.fail("NAL unit of %d bytes, %d left", size, len(p.b))
			}
			u = append(u, p.bytes(int(size)))
		}
		r.Units = append(r.Units, u)
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	return r, nil
}
