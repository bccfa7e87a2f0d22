package wire

// Message types of the RTMP specification.
const (
	TypeSetChunkSize  = 1
	TypeAbort         = 2
	TypeAck           = 3
	TypeUserControl   = 4
	TypeWindowAckSize = 5
	TypeSetPeerBW     = 6
	TypeAudio         = 8
	TypeVideo         = 9
	TypeDataAMF3      = 15
	TypeCommandAMF3   = 17
	TypeDataAMF0      = 18
	TypeCommandAMF0   = 20
	TypeAggregate     = 22
)

// User control events.
const (
	EventStreamBegin = 0
	EventSetBuffer   = 3
	EventPingRequest = 6
	EventPingReply   = 7
)

// Chunk stream ids Vigia writes on.
const (
	CSControl = 2
	CSCommand = 3
	CSAudio   = 4
	CSVideo   = 6
	CSData    = 5
)

// Message is one RTMP message.
type Message struct {
	// Type is the message type id.
	Type uint8

	// StreamID is the message stream id.
	StreamID uint32

	// Timestamp in milliseconds, as sent (32 bits, wrapping).
	Timestamp uint32

	// Payload of the message.
	Payload []byte
}
