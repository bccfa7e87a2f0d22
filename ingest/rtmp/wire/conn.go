package wire

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
)

// OutChunkSize is the chunk size Vigia writes with after telling the peer.
const OutChunkSize = 4096

// WindowAckSize is the acknowledgement window Vigia announces.
const WindowAckSize = 2500000

// Conn is an RTMP connection after the handshake: it reads messages,
// answers the protocol control messages itself (chunk size, abort, ping,
// acknowledgements) and writes messages. Reads are for one goroutine;
// writes may come from any.
type Conn struct {
	rw io.ReadWriter
	cr *ChunkReader

	window  uint32 // peer's acknowledgement window
	lastAck uint64

	wmu sync.Mutex
	cw  *ChunkWriter
}

// NewConn returns a Conn over rw (a net.Conn after the handshake).
func NewConn(rw io.ReadWriter, limits Limits) *Conn {
	return &Conn{
		rw: rw,
		cr: NewChunkReader(bufio.NewReaderSize(rw, 16<<10), limits),
		cw: NewChunkWriter(rw),
	}
}

// SetLimits replaces the limits of what the peer can make the reader
// allocate (ChunkReader.SetLimits). Call it from the reading goroutine.
func (c *Conn) SetLimits(l Limits) error { return c.cr.SetLimits(l) }

// Release drops the partly received messages and gives their memory back
// to the budget of the limits. Call it from the reading goroutine when
// the connection ends.
func (c *Conn) Release() { c.cr.Release() }

// ReadMessage returns the next message that is not protocol control.
func (c *Conn) ReadMessage() (*Message, error) {
	for {
		m, err := c.cr.ReadMessage()
		if err != nil {
			return nil, err
		}
		if c.window > 0 && c.cr.Read-c.lastAck >= uint64(c.window) {
			c.lastAck = c.cr.Read
			if err := c.writeControl(TypeAck, binary.BigEndian.AppendUint32(nil, uint32(c.cr.Read))); err != nil {
				return nil, err
			}
		}
		handled, err := c.control(m)
		if err != nil {
			return nil, err
		}
		if !handled {
			return m, nil
		}
	}
}

func (c *Conn) control(m *Message) (bool, error) {
	switch m.Type {
	case TypeSetChunkSize:
		if len(m.Payload) < 4 {
			return true, fmt.Errorf("%w: short set chunk size", ErrChunkSize)
		}
		return true, c.cr.SetChunkSize(binary.BigEndian.Uint32(m.Payload) & 0x7fffffff)
	case TypeAbort:
		if len(m.Payload) >= 4 {
			c.cr.Abort(binary.BigEndian.Uint32(m.Payload))
		}
		return true, nil
	case TypeWindowAckSize:
		if len(m.Payload) >= 4 {
			c.window = binary.BigEndian.Uint32(m.Payload)
		}
		return true, nil
	case TypeAck, TypeSetPeerBW:
		return true, nil
	case TypeUserControl:
		if len(m.Payload) >= 6 && binary.BigEndian.Uint16(m.Payload) == EventPingRequest {
			reply := binary.BigEndian.AppendUint16(nil, EventPingReply)
			return true, c.writeControl(TypeUserControl, append(reply, m.Payload[2:6]...))
		}
		return true, nil
	}
	return false, nil
}

func (c *Conn) writeControl(typ uint8, payload []byte) error {
	return c.WriteMessage(CSControl, &Message{Type: typ, Payload: payload})
}

// WriteMessage writes m on chunk stream csid.
func (c *Conn) WriteMessage(csid uint32, m *Message) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.cw.WriteMessage(csid, m)
}

// WriteCommand writes an AMF0 command on the command chunk stream.
func (c *Conn) WriteCommand(streamID uint32, values ...any) error {
	return c.WriteMessage(CSCommand, &Message{Type: TypeCommandAMF0, StreamID: streamID, Payload: AppendAMF0(nil, values...)})
}

// WriteUserControl writes a user control event with a 32-bit argument
// (and, for Set Buffer Length, a second one).
func (c *Conn) WriteUserControl(event uint16, args ...uint32) error {
	p := binary.BigEndian.AppendUint16(nil, event)
	for _, a := range args {
		p = binary.BigEndian.AppendUint32(p, a)
	}
	return c.writeControl(TypeUserControl, p)
}

// Start sends the connection settings Vigia uses: window acknowledgement
// size, peer bandwidth and chunk size (after which writes use
// OutChunkSize).
func (c *Conn) Start(peerBW bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	msgs := []*Message{{Type: TypeWindowAckSize, Payload: binary.BigEndian.AppendUint32(nil, WindowAckSize)}}
	if peerBW {
		msgs = append(msgs, &Message{Type: TypeSetPeerBW, Payload: append(binary.BigEndian.AppendUint32(nil, WindowAckSize), 2)})
	}
	msgs = append(msgs, &Message{Type: TypeSetChunkSize, Payload: binary.BigEndian.AppendUint32(nil, OutChunkSize)})
	for _, m := range msgs {
		if err := c.cw.WriteMessage(CSControl, m); err != nil {
			return err
		}
	}
	c.cw.SetChunkSize(OutChunkSize)
	return nil
}

// Command is a decoded AMF command message.
type Command struct {
	// Name of the command ("connect", "publish", "_result", "onStatus" …).
	Name string

	// TransactionID of the command.
	TransactionID float64

	// Args are the values after the transaction id (the command object
	// first).
	Args []any

	// StreamID is the message stream of the command.
	StreamID uint32
}

// ParseCommand decodes a command message (AMF0, or AMF3 with the AMF0
// body commonly sent).
func ParseCommand(m *Message) (*Command, error) {
	p := m.Payload
	if m.Type == TypeCommandAMF3 || m.Type == TypeDataAMF3 {
		if len(p) == 0 {
			return nil, fmt.Errorf("%w: empty amf3 command", ErrAMF)
		}
		p = p[1:]
	}
	vals, err := DecodeAMF0(p)
	if err != nil {
		return nil, err
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("%w: empty command", ErrAMF)
	}
	name, ok := vals[0].(string)
	if !ok {
		return nil, fmt.Errorf("%w: command name is not a string", ErrAMF)
	}
	cmd := &Command{Name: name, StreamID: m.StreamID}
	if len(vals) > 1 {
		cmd.TransactionID, _ = vals[1].(float64)
		cmd.Args = vals[2:]
	}
	return cmd, nil
}

// Arg returns argument i, nil when absent.
func (c *Command) Arg(i int) any {
	if i < 0 || i >= len(c.Args) {
		return nil
	}
	return c.Args[i]
}

// StatusObject returns the info object of an onStatus, _result or _error:
// the last Object argument that has a "code".
func (c *Command) StatusObject() Object {
	for i := len(c.Args) - 1; i >= 0; i-- {
		if o, ok := c.Args[i].(Object); ok && o.Get("code") != nil {
			return o
		}
	}
	return nil
}

// Status builds an onStatus info object.
func Status(level, code, description string) Object {
	return Object{{Name: "level", Value: level}, {Name: "code", Value: code}, {Name: "description", Value: description}}
}
