package wire

import (
	"encoding/binary"
	"fmt"
)

// SplitAggregate splits an aggregate message (FLV tags back to back) into
// audio, video and data messages with timestamps rebased on the
// aggregate's.
func SplitAggregate(m *Message) ([]*Message, error) {
	b := m.Payload
	var out []*Message
	var first uint32
	for i := 0; len(b) > 0; i++ {
		if len(b) < 11 {
			return out, fmt.Errorf("%w: truncated aggregate tag header", ErrFLV)
		}
		size := int(uint24(b[1:4]))
		ts := uint24(b[4:7]) | uint32(b[7])<<24
		if size+15 > len(b) {
			return out, fmt.Errorf("%w: aggregate tag of %d bytes in %d", ErrFLV, size, len(b)-11)
		}
		if i == 0 {
			first = ts
		}
		if len(out) == maxNALUs {
			return out, fmt.Errorf("%w: more than %d tags in an aggregate", ErrFLV, maxNALUs)
		}
		out = append(out, &Message{Type: b[0] & 0x1f, StreamID: m.StreamID, Timestamp: m.Timestamp + (ts - first), Payload: b[11 : 11+size]})
		if prev := binary.BigEndian.Uint32(b[11+size:]); prev != uint32(size+11) && prev != 0 {
			return out, fmt.Errorf("%w: aggregate back pointer %d, want %d", ErrFLV, prev, size+11)
		}
		b = b[15+size:]
	}
	return out, nil
}
