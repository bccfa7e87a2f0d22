package export

import (
	"encoding/binary"
	"fmt"
)

// box is one ISO BMFF box inside a byte slice: b[start:end], its payload
// from start+hdr.
type box struct {
	typ        string
	start, hdr int
	end        int
}

// payload returns the box's content after its header.
func (x box) payload(b []byte) []byte { return b[x.start+x.hdr : x.end] }

// nextBox reads the box header at off in b. A box must fit inside b.
func nextBox(b []byte, off int) (box, error) {
	if len(b)-off < 8 {
		return box{}, fmt.Errorf("%w: truncated box header at %d", ErrBadSegment, off)
	}
	size := uint64(binary.BigEndian.Uint32(b[off:]))
	x := box{typ: string(b[off+4 : off+8]), start: off, hdr: 8}
	switch size {
	case 0:
		size = uint64(len(b) - off)
	case 1:
		if len(b)-off < 16 {
			return box{}, fmt.Errorf("%w: truncated large box header at %d", ErrBadSegment, off)
		}
		size = binary.BigEndian.Uint64(b[off+8:])
		x.hdr = 16
	}
	if size < uint64(x.hdr) || size > uint64(len(b)-off) {
		return box{}, fmt.Errorf("%w: box %q at %d has size %d of %d", ErrBadSegment, x.typ, off, size, len(b)-off)
	}
	x.end = off + int(size)
	return x, nil
}

// children returns the boxes that fill b exactly.
func children(b []byte) ([]box, error) {
	var out []box
	for off := 0; off < len(b); {
		x, err := nextBox(b, off)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
		off = x.end
	}
	return out, nil
}

// child returns the first child of type typ in b, whose content is boxes.
func child(b []byte, typ string) ([]byte, bool, error) {
	bs, err := children(b)
	if err != nil {
		return nil, false, err
	}
	for _, x := range bs {
		if x.typ == typ {
			return x.payload(b), true, nil
		}
	}
	return nil, false, nil
}

// path follows a chain of child types from b.
func path(b []byte, types ...string) ([]byte, error) {
	for _, t := range types {
		next, ok, err := child(b, t)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: no %s box", ErrBadSegment, t)
		}
		b = next
	}
	return b, nil
}

// initTrack is one track of a segment's moov.
type initTrack struct {
	id        uint32
	timescale uint32
	handler   string // "vide" or "soun"
	entry     []byte // the first sample entry of stsd, header included
	width     uint16 // visual sample entries only
	height    uint16
}

// entryType returns the sample entry's four-character code (avc1, hvc1, mp4a...).
func (t initTrack) entryType() string { return string(t.entry[4:8]) }

// parseMoov returns the tracks of a moov payload. It is fed by stored
// objects and never panics on malformed input.
func parseMoov(moov []byte) ([]initTrack, error) {
	bs, err := children(moov)
	if err != nil {
		return nil, err
	}
	var out []initTrack
	for _, x := range bs {
		if x.typ != "trak" {
			continue
		}
		t, err := parseTrak(x.payload(moov))
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func parseTrak(trak []byte) (initTrack, error) {
	var t initTrack
	tkhd, err := path(trak, "tkhd")
	if err != nil {
		return t, err
	}
	switch {
	case len(tkhd) >= 24 && tkhd[0] == 1:
		t.id = binary.BigEndian.Uint32(tkhd[20:])
	case len(tkhd) >= 16 && tkhd[0] == 0:
		t.id = binary.BigEndian.Uint32(tkhd[12:])
	default:
		return t, fmt.Errorf("%w: short tkhd", ErrBadSegment)
	}
	mdia, err := path(trak, "mdia")
	if err != nil {
		return t, err
	}
	mdhd, err := path(mdia, "mdhd")
	if err != nil {
		return t, err
	}
	switch {
	case len(mdhd) >= 24 && mdhd[0] == 1:
		t.timescale = binary.BigEndian.Uint32(mdhd[20:])
	case len(mdhd) >= 16 && mdhd[0] == 0:
		t.timescale = binary.BigEndian.Uint32(mdhd[12:])
	default:
		return t, fmt.Errorf("%w: short mdhd", ErrBadSegment)
	}
	if t.timescale == 0 {
		return t, fmt.Errorf("%w: zero timescale", ErrBadSegment)
	}
	hdlr, err := path(mdia, "hdlr")
	if err != nil {
		return t, err
	}
	if len(hdlr) < 12 {
		return t, fmt.Errorf("%w: short hdlr", ErrBadSegment)
	}
	t.handler = string(hdlr[8:12])
	stsd, err := path(mdia, "minf", "stbl", "stsd")
	if err != nil {
		return t, err
	}
	if len(stsd) < 8 {
		return t, fmt.Errorf("%w: short stsd", ErrBadSegment)
	}
	entry, err := nextBox(stsd, 8)
	if err != nil {
		return t, err
	}
	t.entry = stsd[entry.start:entry.end]
	if t.handler == "vide" && len(t.entry) >= 8+28 {
		t.width = binary.BigEndian.Uint16(t.entry[8+24:])
		t.height = binary.BigEndian.Uint16(t.entry[8+26:])
	}
	return t, nil
}

// splitInit returns the moov payload of a segment and the offset where its
// fragments start.
func splitInit(b []byte) (moov []byte, fragments int, err error) {
	for off := 0; off < len(b); {
		x, err := nextBox(b, off)
		if err != nil {
			return nil, 0, err
		}
		switch x.typ {
		case "moov":
			return x.payload(b), x.end, nil
		case "moof", "mdat":
			return nil, 0, fmt.Errorf("%w: fragment before moov", ErrBadSegment)
		}
		off = x.end
	}
	return nil, 0, fmt.Errorf("%w: no moov box", ErrBadSegment)
}

// videoIsH264 reports whether a segment's first video track is H.264
// (sample entry avc1 or avc3). Unparsable bytes are not.
func videoIsH264(seg []byte) bool {
	moov, _, err := splitInit(seg)
	if err != nil {
		return false
	}
	tracks, err := parseMoov(moov)
	if err != nil {
		return false
	}
	for _, t := range tracks {
		if t.handler == "vide" {
			e := t.entryType()
			return e == "avc1" || e == "avc3"
		}
	}
	return false
}
