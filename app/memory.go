package app

import (
	"runtime/debug"
	"time"

	"github.com/vigia/vigia/thumbs/decoder"
)

// memoryRelease returns the memory the Go heap freed to the system every
// interval (recording.release_memory_every). Left to itself, the runtime
// hands freed pages back slowly, so the resident set keeps the peak of the
// minute (every camera cutting its segment and its thumbnail at once) long
// after it passed. A forced collection of a heap that is mostly media
// buffers costs a few milliseconds. The C side (libavcodec, through glibc's
// malloc) is trimmed at the same time.
type memoryRelease struct {
	stop, done chan struct{}
}

func startMemoryRelease(every time.Duration) *memoryRelease {
	if every <= 0 {
		return nil
	}
	m := &memoryRelease{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				debug.FreeOSMemory()
				decoder.ReleaseMemory()
			}
		}
	}()
	return m
}

func (m *memoryRelease) close() {
	if m == nil {
		return
	}
	close(m.stop)
	<-m.done
}
