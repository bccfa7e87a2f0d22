package decodeproc

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// A frame is a 12-byte header followed by its payload:
//
//	0  'V' 'D'       magic
//	2  version       1
//	3  type          frameHello … frameInspect
//	4  id            uint32, big-endian: the request a reply answers
//	8  size          uint32, big-endian: payload bytes, at most MaxPayload
//
// The parent sends a request frame and reads one reply frame with the same
// id before it sends the next one.
const (
	magic0, magic1 = 'V', 'D'
	version        = 1
)

// Frame types.
const (
	frameHello   = 1 // child → parent, once, when it is ready (a hello)
	frameDecode  = 2 // parent → child: a Request
	frameResult  = 3 // child → parent: a Result
	frameError   = 4 // child → parent: a request failed (code, message)
	framePing    = 5 // parent → child: reply size, then any bytes
	framePong    = 6 // child → parent: as many bytes as the ping asked
	frameTest    = 7 // parent → child: a test operation (--test-ops only)
	frameInspect = 8 // child → parent: the process's sandbox, as text
	frameLast    = frameInspect
)

// header is a frame's header.
type header struct {
	typ  uint8
	id   uint32
	size int
}

// appendHeader appends the header of a frame of typ, id and payload size.
func appendHeader(b []byte, typ uint8, id uint32, size int) []byte {
	b = append(b, magic0, magic1, version, typ)
	b = binary.BigEndian.AppendUint32(b, id)
	return binary.BigEndian.AppendUint32(b, uint32(size))
}

// writeFrame writes one frame whose payload is the concatenation of parts.
func writeFrame(w *bufio.Writer, typ uint8, id uint32, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if n > MaxPayload {
		return fmt.Errorf("%w: frame of %d bytes", ErrTooLarge, n)
	}
	var hb [headerSize]byte
	if _, err := w.Write(appendHeader(hb[:0], typ, id, n)); err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return w.Flush()
}

// readFrame reads one frame, its payload into buf (reused when it is large
// enough). A payload is allocated as it arrives, readStep at a time, so a
// header announcing more than follows costs little. io.EOF means the
// stream ended cleanly before a header; a stream that ends inside a frame
// gives io.ErrUnexpectedEOF.
func readFrame(r io.Reader, buf []byte) (header, []byte, error) {
	var hb [headerSize]byte
	if _, err := io.ReadFull(r, hb[:]); err != nil {
		return header{}, buf, err
	}
	if hb[0] != magic0 || hb[1] != magic1 {
		return header{}, buf, fmt.Errorf("%w: bad magic %#x %#x", ErrProtocol, hb[0], hb[1])
	}
	if hb[2] != version {
		return header{}, buf, fmt.Errorf("%w: version %d, want %d", ErrProtocol, hb[2], version)
	}
	h := header{typ: hb[3], id: binary.BigEndian.Uint32(hb[4:]), size: int(binary.BigEndian.Uint32(hb[8:]))}
	if h.typ < frameHello || h.typ > frameLast {
		return h, buf, fmt.Errorf("%w: frame type %d", ErrProtocol, h.typ)
	}
	if h.size > MaxPayload {
		return h, buf, fmt.Errorf("%w: payload of %d bytes (limit %d)", ErrProtocol, h.size, MaxPayload)
	}
	buf = buf[:0]
	for len(buf) < h.size {
		step := min(h.size-len(buf), readStep)
		buf = slices.Grow(buf, step)
		n, err := io.ReadFull(r, buf[len(buf):len(buf)+step])
		buf = buf[:len(buf)+n]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return h, buf, err
		}
	}
	return h, buf, nil
}

// parser reads the fields of a payload. The first read past the end sets
// err; later reads return zero values.
type parser struct {
	b   []byte
	err error
}

func (p *parser) need(n int) bool {
	if p.err != nil {
		return false
	}
	if n < 0 || len(p.b) < n {
		p.err = fmt.Errorf("%w: payload ends early", ErrProtocol)
		return false
	}
	return true
}

func (p *parser) u8() uint8 {
	if !p.need(1) {
		return 0
	}
	v := p.b[0]
	p.b = p.b[1:]
	return v
}

func (p *parser) u16() uint16 {
	if !p.need(2) {
		return 0
	}
	v := binary.BigEndian.Uint16(p.b)
	p.b = p.b[2:]
	return v
}

func (p *parser) u32() uint32 {
	if !p.need(4) {
		return 0
	}
	v := binary.BigEndian.Uint32(p.b)
	p.b = p.b[4:]
	return v
}

func (p *parser) u64() uint64 {
	if !p.need(8) {
		return 0
	}
	v := binary.BigEndian.Uint64(p.b)
	p.b = p.b[8:]
	return v
}

// bytes returns the next n bytes (aliasing the payload).
func (p *parser) bytes(n int) []byte {
	if !p.need(n) {
		return nil
	}
	v := p.b[:n:n]
	p.b = p.b[n:]
	return v
}

// fail sets err unless one is set.
func (p *parser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
	}
}

// end reports the first error, or one when bytes are left over.
func (p *parser) end() error {
	if p.err == nil && len(p.b) > 0 {
		p.err = fmt.Errorf("%w: %d bytes left over", ErrProtocol, len(p.b))
	}
	return p.err
}
