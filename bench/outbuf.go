package bench

import "sync"

// outBuffer keeps the last max bytes written to it, for a child's output in
// error messages. It is safe for concurrent use.
type outBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newOutBuffer(max int) *outBuffer { return &outBuffer{max: max} }

// Write implements io.Writer.
func (b *outBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// String returns what is kept.
func (b *outBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
