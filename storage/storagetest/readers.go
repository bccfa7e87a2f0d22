package storagetest

import (
	"bytes"
	"errors"
	"io"
)

// errBrokenReader is what failingReader returns after its bytes.
var errBrokenReader = errors.New("reader broke")

// bytesReader returns a seekable reader of data.
func bytesReader(data []byte) io.Reader { return bytes.NewReader(data) }

// failingReader yields n bytes and then fails.
type failingReader struct{ n int }

// Read fills p with 'x' until n bytes are given, then fails.
func (r *failingReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, errBrokenReader
	}
	k := min(len(p), r.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	r.n -= k
	return k, nil
}

// streamOnly hides every method of a reader but Read, so a store cannot seek it.
type streamOnly struct{ r io.Reader }

// Read reads from the wrapped reader.
func (s streamOnly) Read(p []byte) (int, error) { return s.r.Read(p) }
