package wire

import "sync/atomic"

// Limits caps what a peer can make a connection allocate.
type Limits struct {
	// MaxMessageSize is the longest message accepted. It defaults to 8 MiB,
	// several times a 4K keyframe.
	MaxMessageSize int

	// MaxChunkStreams is the number of chunk streams a peer may use. It
	// defaults to 32 (encoders use 3 to 6).
	MaxChunkStreams int

	// MaxBuffered caps the memory held by partly received messages over all
	// chunk streams (the capacity of their buffers). It defaults to
	// 2 × MaxMessageSize.
	MaxBuffered int

	// Budget, optional, is shared with other connections: the memory held
	// by partly received messages is also drawn from it, and a connection
	// that finds it spent fails with ErrBudget.
	Budget *Budget
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

// Budget is a number of bytes that several connections draw from for the
// messages they are receiving, so that many connections together cannot
// hold more than it. It is safe for concurrent use.
type Budget struct {
	max  int64
	used atomic.Int64
}

// NewBudget returns a budget of max bytes.
func NewBudget(max int64) *Budget { return &Budget{max: max} }

// Used returns the bytes drawn now.
func (b *Budget) Used() int64 { return b.used.Load() }

// take draws n bytes, or reports false and draws nothing when fewer are
// left. A nil budget is unlimited.
func (b *Budget) take(n int) bool {
	if b == nil || n <= 0 {
		return true
	}
	for {
		u := b.used.Load()
		if u+int64(n) > b.max {
			return false
		}
		if b.used.CompareAndSwap(u, u+int64(n)) {
			return true
		}
	}
}

// give returns n bytes drawn with take.
func (b *Budget) give(n int) {
	if b != nil && n > 0 {
		b.used.Add(-int64(n))
	}
}
