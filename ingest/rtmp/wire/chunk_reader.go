package wire

import (
	"encoding/binary"
	"fmt"
	"io"
)

// readPiece is the most bytes read into a message buffer at a time, and
// the first capacity of the buffer of a message longer than it: a lying
// message length costs memory only as bytes arrive (the buffer doubles at
// most, up to the message length).
const readPiece = 64 << 10

// chunkState is the header state of one chunk stream.
type chunkState struct {
	timestamp uint32 // of the message being received
	delta     uint32 // last timestamp field (absolute for format 0)
	length    uint32
	typ       uint8
	streamID  uint32
	extended  bool // the last header used an extended timestamp
	buf       []byte
	inMessage bool
}

// ChunkReader reads RTMP messages from a chunk stream. It is not safe for
// concurrent use.
type ChunkReader struct {
	r         io.Reader
	limits    Limits
	chunkSize int
	streams   map[uint32]*chunkState
	buffered  int // capacity of the buffers of partly received messages
	hdr       [16]byte

	// Read counts the bytes read, for acknowledgements.
	Read uint64
}

// NewChunkReader returns a reader with the initial chunk size of 128.
func NewChunkReader(r io.Reader, limits Limits) *ChunkReader {
	return &ChunkReader{r: r, limits: limits.withDefaults(), chunkSize: 128, streams: map[uint32]*chunkState{}}
}

// SetChunkSize applies a Set Chunk Size from the peer.
func (cr *ChunkReader) SetChunkSize(n uint32) error {
	if n == 0 || n > MaxChunkSize {
		return fmt.Errorf("%w: %d", ErrChunkSize, n)
	}
	cr.chunkSize = int(n)
	return nil
}

// SetLimits replaces the limits (a server raises them once the peer has
// authenticated). The memory held by partly received messages moves from
// the old budget to the new one; it fails with ErrBudget, changing
// nothing, when the new budget cannot take it. Limits already exceeded
// (more chunk streams than the new maximum) are enforced from the next
// chunk on.
func (cr *ChunkReader) SetLimits(l Limits) error {
	l = l.withDefaults()
	if l.Budget != cr.limits.Budget {
		if !l.Budget.take(cr.buffered) {
			return fmt.Errorf("%w: %d bytes buffered", ErrBudget, cr.buffered)
		}
		cr.limits.Budget.give(cr.buffered)
	}
	cr.limits = l
	return nil
}

// Release drops every partly received message and gives their memory back
// to the budget. Call it when the connection ends.
func (cr *ChunkReader) Release() {
	for _, cs := range cr.streams {
		cr.drop(cs)
	}
}

// Abort drops the partly received message of a chunk stream.
func (cr *ChunkReader) Abort(csid uint32) {
	if cs := cr.streams[csid]; cs != nil {
		cr.drop(cs)
	}
}

// drop forgets the partly received message of cs.
func (cr *ChunkReader) drop(cs *chunkState) {
	cr.buffered -= cap(cs.buf)
	cr.limits.Budget.give(cap(cs.buf))
	cs.buf, cs.inMessage = nil, false
}

// grow makes room for n more bytes in the buffer of cs, whose message is
// cs.length long: the first buffer is min(length, readPiece), then it
// doubles, never past the length. It fails when the new buffer would
// exceed MaxBuffered or the budget.
func (cr *ChunkReader) grow(cs *chunkState, n int) error {
	l := len(cs.buf)
	if l+n <= cap(cs.buf) {
		return nil
	}
	size := max(l+n, min(max(2*cap(cs.buf), readPiece), int(cs.length)))
	more := size - cap(cs.buf)
	if cr.buffered+more > cr.limits.MaxBuffered {
		return fmt.Errorf("%w: %d bytes buffered", ErrTooManyStreams, cr.buffered+more)
	}
	if !cr.limits.Budget.take(more) {
		return fmt.Errorf("%w: %d more bytes wanted", ErrBudget, more)
	}
	buf := make([]byte, l, size)
	copy(buf, cs.buf)
	cs.buf = buf
	cr.buffered += more
	return nil
}

func (cr *ChunkReader) full(b []byte) error {
	n, err := io.ReadFull(cr.r, b)
	cr.Read += uint64(n)
	return err
}

func uint24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

// ReadMessage reads chunks until a message is complete and returns it.
// Protocol control messages are returned like the others.
func (cr *ChunkReader) ReadMessage() (*Message, error) {
	for {
		m, err := cr.readChunk()
		if err != nil || m != nil {
			return m, err
		}
	}
}

// readChunk reads one chunk; it returns a message when the chunk completed
// one.
func (cr *ChunkReader) readChunk() (*Message, error) {
	h := cr.hdr[:]
	if err := cr.full(h[:1]); err != nil {
		return nil, err
	}
	format := h[0] >> 6
	csid := uint32(h[0] & 0x3f)
	switch csid {
	case 0:
		if err := cr.full(h[:1]); err != nil {
			return nil, err
		}
		csid = uint32(h[0]) + 64
	case 1:
		if err := cr.full(h[:2]); err != nil {
			return nil, err
		}
		csid = uint32(h[1])*256 + uint32(h[0]) + 64
	}
	cs := cr.streams[csid]
	if cs == nil {
		if format != 0 {
			return nil, fmt.Errorf("%w: format %d on new chunk stream %d", ErrBadChunk, format, csid)
		}
		if len(cr.streams) >= cr.limits.MaxChunkStreams {
			return nil, fmt.Errorf("%w: more than %d", ErrTooManyStreams, cr.limits.MaxChunkStreams)
		}
		cs = &chunkState{}
		cr.streams[csid] = cs
	}
	var field uint32
	switch format {
	case 0:
		if err := cr.full(h[:11]); err != nil {
			return nil, err
		}
		field = uint24(h[0:3])
		cs.length = uint24(h[3:6])
		cs.typ = h[6]
		cs.streamID = binary.LittleEndian.Uint32(h[7:11])
	case 1:
		if err := cr.full(h[:7]); err != nil {
			return nil, err
		}
		field = uint24(h[0:3])
		cs.length = uint24(h[3:6])
		cs.typ = h[6]
	case 2:
		if err := cr.full(h[:3]); err != nil {
			return nil, err
		}
		field = uint24(h[0:3])
	}
	if format < 3 {
		cs.extended = field == 0xffffff
	}
	if cs.extended {
		if err := cr.full(h[:4]); err != nil {
			return nil, err
		}
		if format < 3 {
			field = binary.BigEndian.Uint32(h[:4])
		}
	}
	if format < 3 && cs.inMessage {
		// A new header in the middle of a message: the peer gave up on
		// the previous one.
		cr.drop(cs)
	}
	if !cs.inMessage {
		switch format {
		case 0:
			cs.timestamp, cs.delta = field, field
		case 1, 2:
			cs.delta = field
			cs.timestamp += field
		case 3:
			cs.timestamp += cs.delta
		}
		if int(cs.length) > cr.limits.MaxMessageSize {
			return nil, fmt.Errorf("%w: %d bytes", ErrMessageTooLarge, cs.length)
		}
		cs.inMessage = true
	}
	need := int(cs.length) - len(cs.buf)
	if need > cr.chunkSize {
		need = cr.chunkSize
	}
	for need > 0 {
		n := min(need, readPiece)
		if err := cr.grow(cs, n); err != nil {
			return nil, err
		}
		start := len(cs.buf)
		cs.buf = cs.buf[:start+n]
		if err := cr.full(cs.buf[start:]); err != nil {
			return nil, err
		}
		need -= n
	}
	if len(cs.buf) < int(cs.length) {
		return nil, nil
	}
	m := &Message{Type: cs.typ, StreamID: cs.streamID, Timestamp: cs.timestamp, Payload: cs.buf}
	cr.drop(cs) // the payload is the caller's now
	return m, nil
}
