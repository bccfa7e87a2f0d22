package decoder

import (
	"runtime/debug"
	"time"
)

// MemoryRelease returns the memory the Go heap freed to the system every
// interval (recording.release_memory_every). Left to itself, the runtime
// hands freed pages back slowly, so the resident set keeps the peak of the
// minute (every camera cutting its segment and its thumbnail at once) long
// after it passed. A forced collection of a heap that is mostly media
// buffers costs a few milliseconds. The C side (libavcodec, through glibc's
// malloc) is trimmed at the same time (ReleaseMemory).
type MemoryRelease struct {
	stop, done chan struct{}
}

// StartMemoryRelease starts releasing memory every interval, in a
// goroutine that exits on Close; nil, which releases nothing, when every
// is not positive.
func StartMemoryRelease(every time.Duration) *MemoryRelease {
	return startRelease(every, func() {
		debug.FreeOSMemory()
		ReleaseMemory()
	})
}

func startRelease(every time.Duration, release func()) *MemoryRelease {
	if every <= 0 {
		return nil
	}
	m := &MemoryRelease{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				release()
			}
		}
	}()
	return m
}

// Close stops the releases and waits for its goroutine; a nil m is
// closed already.
func (m *MemoryRelease) Close() {
	if m == nil {
		return
	}
	close(m.stop)
	<-m.done
}
