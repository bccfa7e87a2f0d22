package wire

import (
	"encoding/binary"
	"io"
)

// ChunkWriter writes RTMP messages as chunks: a full header (format 0) on
// the first chunk of each message, format 3 on the others. It is not safe
// for concurrent use.
type ChunkWriter struct {
	w         io.Writer
	chunkSize int
	buf       []byte
}

// NewChunkWriter returns a writer with the initial chunk size of 128.
func NewChunkWriter(w io.Writer) *ChunkWriter {
	return &ChunkWriter{w: w, chunkSize: 128}
}

// SetChunkSize changes the size of the chunks written; the peer must have
// been told with a Set Chunk Size message first.
func (cw *ChunkWriter) SetChunkSize(n int) {
	if n > 0 && n <= MaxChunkSize {
		cw.chunkSize = n
	}
}

func basicHeader(b []byte, format byte, csid uint32) []byte {
	switch {
	case csid < 64:
		return append(b, format<<6|byte(csid))
	case csid < 320:
		return append(b, format<<6, byte(csid-64))
	default:
		return append(b, format<<6|1, byte((csid-64)&0xff), byte((csid-64)>>8))
	}
}

// WriteMessage writes m on chunk stream csid (2 to 65599).
func (cw *ChunkWriter) WriteMessage(csid uint32, m *Message) error {
	b := cw.buf[:0]
	b = basicHeader(b, 0, csid)
	ts := m.Timestamp
	ext := ts >= 0xffffff
	field := ts
	if ext {
		field = 0xffffff
	}
	n := uint32(len(m.Payload))
	b = append(b, byte(field>>16), byte(field>>8), byte(field), byte(n>>16), byte(n>>8), byte(n), m.Type)
	b = binary.LittleEndian.AppendUint32(b, m.StreamID)
	if ext {
		b = binary.BigEndian.AppendUint32(b, ts)
	}
	p := m.Payload
	for first := true; first || len(p) > 0; first = false {
		if !first {
			b = basicHeader(b, 3, csid)
			if ext {
				b = binary.BigEndian.AppendUint32(b, ts)
			}
		}
		k := len(p)
		if k > cw.chunkSize {
			k = cw.chunkSize
		}
		b = append(b, p[:k]...)
		p = p[k:]
	}
	cw.buf = b[:0]
	if cap(cw.buf) > 1<<20 {
		cw.buf = nil
	}
	_, err := cw.w.Write(b)
	return err
}
