package integrity

import (
	"crypto/sha256"
	"hash"
	"io"
	"sync"
)

// HashReader hashes the bytes read through it, so an upload yields the
// SHA-256 of what it sent without reading the source a second time. A seek
// back to the start (an upload retried) starts the hash again; any other
// seek leaves no usable hash and Sum reports false.
type HashReader struct {
	r    io.ReadSeeker
	h    hash.Hash
	off  int64
	lost bool
}

// NewHashReader returns a HashReader reading r from its current offset,
// which must be its start.
func NewHashReader(r io.ReadSeeker) *HashReader {
	return &HashReader{r: r, h: sha256.New()}
}

// Read reads from the source and hashes what it returns.
func (h *HashReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	h.off += int64(n)
	return n, err
}

// Seek seeks the source; see HashReader for its effect on the hash.
func (h *HashReader) Seek(offset int64, whence int) (int64, error) {
	n, err := h.r.Seek(offset, whence)
	if err != nil {
		h.lost = true
		return n, err
	}
	switch {
	case n == h.off:
	case n == 0:
		h.h.Reset()
		h.off, h.lost = 0, false
	default:
		h.lost = true
	}
	return n, nil
}

// Sum returns the SHA-256 of the size bytes read, and false when not
// exactly those were read in order.
func (h *HashReader) Sum(size int64) ([32]byte, bool) {
	var s [32]byte
	if h.lost || h.off != size {
		return s, false
	}
	copy(s[:], h.h.Sum(nil))
	return s, true
}

// hashBufSize is the read size of HashAll: a spooled segment of a 2 Mbit/s
// camera (2.5 MB for 10 s) is read in 20 reads instead of 80 (io.Copy's 32
// KiB), and the buffer stays in the CPU's cache while it is hashed.
const hashBufSize = 128 << 10

// hashBufs holds HashAll's buffers: every stored segment is hashed once,
// so a buffer per call would be garbage at the segment rate.
var hashBufs = sync.Pool{New: func() any {
	b := make([]byte, hashBufSize)
	return &b
}}

// HashAll returns the SHA-256 and length of r's remaining bytes.
func HashAll(r io.Reader) ([32]byte, int64, error) {
	h := sha256.New()
	buf := hashBufs.Get().(*[]byte)
	// The struct hides r's WriteTo (an *os.File has one), which would
	// copy through a buffer of its own.
	n, err := io.CopyBuffer(h, struct{ io.Reader }{r}, *buf)
	hashBufs.Put(buf)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s, n, err
}
