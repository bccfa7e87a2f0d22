package media

import (
	"math/bits"
	"os"
	"sync"
	"testing"
)

// A Buffer is pooled memory for the data of units: a source takes one with
// GetBuffer, fills it and hands it over with the unit (Unit.Buf); the
// pipeline puts it back (Unit.Release) once the segmenter and the
// consumers have returned. Consumers therefore never keep a unit's NAL
// units or payload past their Unit call: they copy what they need, or read
// a video frame back from where it was stored (Unit.Stored).
//
// A buffer that is never put back is collected like any other memory:
// forgetting to release is safe; releasing early is not.
type Buffer struct {
	// B is the memory, len(B) == cap(B), a power of two.
	B []byte
}

// Buffer sizes: powers of two from 1<<minBufferShift to 1<<maxBufferShift.
// Larger requests get memory of their own that is not pooled.
const (
	minBufferShift = 11 // 2 KiB
	maxBufferShift = 23 // 8 MiB
)

var bufferPools [maxBufferShift - minBufferShift + 1]sync.Pool

// poisonReleased fills buffers put back with a pattern, so that a consumer
// reading a unit after its release sees garbage (in tests, or with
// VIGIA_POISON_RELEASED=1).
var poisonReleased = testing.Testing() || os.Getenv("VIGIA_POISON_RELEASED") == "1"

// PoisonByte is the byte released buffers are filled with when poisoning
// is on.
const PoisonByte = 0xEE

// SetPoisonReleased turns poisoning on or off and returns the previous
// setting; for benchmarks, whose figures filling would distort. Not safe
// to call while buffers are released concurrently.
func SetPoisonReleased(on bool) bool {
	old := poisonReleased
	poisonReleased = on
	return old
}

func bufferClass(n int) int {
	if n <= 1<<minBufferShift {
		return 0
	}
	return bits.Len(uint(n-1)) - minBufferShift
}

// GetBuffer returns a buffer of at least n bytes. Its content is
// undefined.
func GetBuffer(n int) *Buffer {
	c := bufferClass(n)
	if c >= len(bufferPools) {
		return &Buffer{B: make([]byte, n)}
	}
	if b, ok := bufferPools[c].Get().(*Buffer); ok {
		return b
	}
	return &Buffer{B: make([]byte, 1<<(c+minBufferShift))}
}

// Put gives b back; b must not be used afterwards.
func (b *Buffer) Put() {
	n := len(b.B)
	if n == 0 || n&(n-1) != 0 {
		return // not from a pool
	}
	c := bufferClass(n)
	if c >= len(bufferPools) {
		return
	}
	if poisonReleased {
		for i := range b.B {
			b.B[i] = PoisonByte
		}
	}
	bufferPools[c].Put(b)
}
