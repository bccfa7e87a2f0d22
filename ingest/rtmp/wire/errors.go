package wire

import "errors"

// Errors returned by the parsers. Callers close the connection on any of
// them; the sentinel names the reason for logs and metrics.
var (
	// ErrHandshake is a handshake that is not plain RTMP version 3.
	ErrHandshake = errors.New("rtmp: bad handshake")

	// ErrChunkSize is a Set Chunk Size outside 1 to MaxChunkSize.
	ErrChunkSize = errors.New("rtmp: bad chunk size")

	// ErrMessageTooLarge is a message longer than Limits.MaxMessageSize.
	ErrMessageTooLarge = errors.New("rtmp: message too large")

	// ErrTooManyStreams is a peer opening more chunk streams than
	// Limits.MaxChunkStreams, or buffering more than Limits.MaxBuffered.
	ErrTooManyStreams = errors.New("rtmp: too many chunk streams")

	// ErrBudget is a partly received message that would draw more than
	// what is left of the Limits.Budget shared with other connections.
	ErrBudget = errors.New("rtmp: shared buffer budget exhausted")

	// ErrBadChunk is a chunk header that does not follow the protocol (a
	// compressed header on a chunk stream with no previous header).
	ErrBadChunk = errors.New("rtmp: bad chunk header")

	// ErrAMF is AMF0 data that does not decode.
	ErrAMF = errors.New("rtmp: bad amf0 data")

	// ErrFLV is an FLV tag whose header or lengths do not hold.
	ErrFLV = errors.New("flv: bad tag")

	// ErrUnsupported is a codec or tag kind Vigia does not record.
	ErrUnsupported = errors.New("flv: unsupported codec")
)
