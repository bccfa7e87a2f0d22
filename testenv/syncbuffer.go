package testenv

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for a process's (or a logger's) writes and
// the test's reads.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Sync implements zapcore.WriteSyncer.
func (b *Buffer) Sync() error { return nil }
