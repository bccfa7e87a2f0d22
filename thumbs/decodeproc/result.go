package decodeproc

import (
	"encoding/binary"
	"fmt"
	"image"
	"time"
)

// Result is what a decoder process returns for a Request.
type Result struct {
	// Pictures counts the units that gave a picture.
	Pictures int

	// Last is the index of the unit that gave the last picture.
	Last int

	// Width and Height are the size of the last picture, as decoded.
	Width, Height int

	// GrayFirst and GrayLast are the luma planes asked for (nil when not
	// asked, or when the first unit gave no picture).
	GrayFirst, GrayLast *image.Gray

	// JPEG is the last picture encoded, when asked for.
	JPEG []byte

	// YCbCr is the last picture raw (full-range 4:2:0), when asked for.
	YCbCr *image.YCbCr

	// ImageWidth and ImageHeight are the size of JPEG or YCbCr.
	ImageWidth, ImageHeight int

	// CPU is the CPU time the decoder process spent on the request.
	CPU time.Duration

	// cpu is the decoder process's CPU time so far.
	cpu time.Duration
}

// The payload of a result frame:
//
//	u32 pictures
//	u32 last              index of the unit of the last picture
//	u16 width, u16 height of the last picture
//	u64 cpu               the process's CPU time so far, in nanoseconds
//	u64 request cpu       its CPU time for this request, in nanoseconds
//	gray first, gray last: u16 width, u16 height (both 0: none), width×height bytes
//	u8  image format      0 none, 1 JPEG, 2 YCbCr
//	u16 width, u16 height of the image (0 without one)
//	u32 size, bytes       a YCbCr image is Y, then Cb, then Cr, rows packed
//	                      (chroma planes (width+1)/2 × (height+1)/2)

// ycbcrSize is the size of a packed 4:2:0 picture of w×h.
func ycbcrSize(w, h int) int {
	return w*h + 2*((w+1)/2)*((h+1)/2)
}

// appendGray appends a luma plane (nil: none), rows packed.
func appendGray(b []byte, g *image.Gray) []byte {
	if g == nil {
		return append(b, 0, 0, 0, 0)
	}
	w, h := g.Rect.Dx(), g.Rect.Dy()
	b = binary.BigEndian.AppendUint16(b, uint16(w))
	b = binary.BigEndian.AppendUint16(b, uint16(h))
	for y := range h {
		b = append(b, g.Pix[y*g.Stride:y*g.Stride+w]...)
	}
	return b
}

// appendPlane appends w×h bytes of a plane with stride.
func appendPlane(b, pix []byte, stride, w, h int) []byte {
	for y := range h {
		b = append(b, pix[y*stride:y*stride+w]...)
	}
	return b
}

// marshalResult encodes r as a result payload.
func marshalResult(r *Result) ([]byte, error) {
	for _, g := range []*image.Gray{r.GrayFirst, r.GrayLast} {
		if g != nil && (g.Rect.Dx() > MaxSide || g.Rect.Dy() > MaxSide) {
			return nil, fmt.Errorf("%w: luma plane %v", ErrTooLarge, g.Rect)
		}
	}
	size := 40
	for _, g := range []*image.Gray{r.GrayFirst, r.GrayLast} {
		if g != nil {
			size += g.Rect.Dx() * g.Rect.Dy()
		}
	}
	format, iw, ih, isize := NoImage, 0, 0, 0
	switch {
	case r.JPEG != nil:
		format, iw, ih, isize = JPEG, r.ImageWidth, r.ImageHeight, len(r.JPEG)
	case r.YCbCr != nil:
		iw, ih = r.YCbCr.Rect.Dx(), r.YCbCr.Rect.Dy()
		format, isize = YCbCr, ycbcrSize(iw, ih)
	}
	if iw > MaxSide || ih > MaxSide || size+isize > MaxPayload {
		return nil, fmt.Errorf("%w: picture of %dx%d, %d bytes", ErrTooLarge, iw, ih, size+isize)
	}
	b := make([]byte, 0, size+isize)
	b = binary.BigEndian.AppendUint32(b, uint32(r.Pictures))
	b = binary.BigEndian.AppendUint32(b, uint32(r.Last))
	b = binary.BigEndian.AppendUint16(b, uint16(r.Width))
	b = binary.BigEndian.AppendUint16(b, uint16(r.Height))
	b = binary.BigEndian.AppendUint64(b, uint64(r.cpu))
	b = binary.BigEndian.AppendUint64(b, uint64(r.CPU))
	b = appendGray(b, r.GrayFirst)
	b = appendGray(b, r.GrayLast)
	b = append(b, uint8(format))
	b = binary.BigEndian.AppendUint16(b, uint16(iw))
	b = binary.BigEndian.AppendUint16(b, uint16(ih))
	b = binary.BigEndian.AppendUint32(b, uint32(isize))
	switch format {
	case JPEG:
		b = append(b, r.JPEG...)
	case YCbCr:
		y := r.YCbCr
		cw, ch := (iw+1)/2, (ih+1)/2
		b = appendPlane(b, y.Y, y.YStride, iw, ih)
		b = appendPlane(b, y.Cb, y.CStride, cw, ch)
		b = appendPlane(b, y.Cr, y.CStride, cw, ch)
	}
	return b, nil
}

// parseGray reads a luma plane (nil: none).
func parseGray(p *parser) *image.Gray {
	w, h := int(p.u16()), int(p.u16())
	switch {
	case p.err != nil:
		return nil
	case w == 0 && h == 0:
		return nil
	case w == 0 || h == 0 || w > MaxSide || h > MaxSide:
		p.fail("luma plane of %dx%d", w, h)
		return nil
	}
	pix := p.bytes(w * h)
	if p.err != nil {
		return nil
	}
	return &image.Gray{Pix: pix, Stride: w, Rect: image.Rect(0, 0, w, h)}
}

// parseResult parses the payload of a result frame. Its planes alias
// payload.
func parseResult(payload []byte) (*Result, error) {
	p := parser{b: payload}
	r := &Result{}
	r.Pictures = int(p.u32())
	last := p.u32()
	r.Width, r.Height = int(p.u16()), int(p.u16())
	r.cpu = time.Duration(p.u64() & (1<<63 - 1))
	r.CPU = time.Duration(p.u64() & (1<<63 - 1))
	switch {
	case p.err != nil:
	case r.Pictures == 0 || r.Pictures > MaxUnits:
		p.fail("%d pictures", r.Pictures)
	case last >= MaxUnits:
		p.fail("last picture at unit %d", last)
	case r.Width == 0 || r.Height == 0 || r.Width > MaxSide || r.Height > MaxSide:
		p.fail("picture of %dx%d", r.Width, r.Height)
	}
	r.Last = int(last)
	r.GrayFirst = parseGray(&p)
	r.GrayLast = parseGray(&p)
	format := ImageFormat(p.u8())
	iw, ih := int(p.u16()), int(p.u16())
	size := int(p.u32())
	if p.err != nil {
		return nil, p.err
	}
	switch format {
	case NoImage:
		if iw != 0 || ih != 0 || size != 0 {
			p.fail("image fields without an image")
		}
	case JPEG:
		if iw == 0 || ih == 0 || iw > MaxSide || ih > MaxSide || size == 0 {
			p.fail("JPEG of %dx%d in %d bytes", iw, ih, size)
		}
		r.JPEG, r.ImageWidth, r.ImageHeight = p.bytes(size), iw, ih
	case YCbCr:
		if iw == 0 || ih == 0 || iw > MaxSide || ih > MaxSide || size != ycbcrSize(iw, ih) {
			p.fail("YCbCr picture of %dx%d in %d bytes", iw, ih, size)
			break
		}
		pix := p.bytes(size)
		if p.err != nil {
			break
		}
		cw, ch := (iw+1)/2, (ih+1)/2
		r.ImageWidth, r.ImageHeight = iw, ih
		r.YCbCr = &image.YCbCr{
			Y: pix[:iw*ih], Cb: pix[iw*ih : iw*ih+cw*ch], Cr: pix[iw*ih+cw*ch:],
			YStride: iw, CStride: cw, SubsampleRatio: image.YCbCrSubsampleRatio420,
			Rect: image.Rect(0, 0, iw, ih),
		}
	default:
		p.fail("image format %d", format)
	}
	if err := p.end(); err != nil {
		return nil, err
	}
	return r, nil
}
