package wire

// Limits caps what a peer can make a connection allocate.
type Limits struct {
	// MaxMessageSize is the longest message accepted. It defaults to 8 MiB,
	// several times a 4K keyframe.
	MaxMessageSize int

	// MaxChunkStreams is the number of chunk streams a peer may use. It
	// defaults to 32 (encoders use 3 to 6).
	MaxChunkStreams int

	// MaxBuffered caps the bytes of partly received messages over all
	// chunk streams. It defaults to 2 × MaxMessageSize.
	MaxBuffered int
}

// MaxChunkSize is the largest chunk size accepted (the largest message
// length a chunk header can carry).
const MaxChunkSize = 1<<24 - 1

func (l Limits) withDefaults() Limits {
	if l.MaxMessageSize <= 0 {
		l.MaxMessageSize = 8 << 20
	}
	if l.MaxChunkStreams <= 0 {
		l.MaxChunkStreams = 32
	}
	if l.MaxBuffered <= 0 {
		l.MaxBuffered = 2 * l.MaxMessageSize
	}
	return l
}
