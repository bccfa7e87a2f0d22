package decodeproc

import (
	"bytes"
	"sync"
)

// tail keeps the last bytes written to it: a decoder process's standard
// error (libavcodec's messages, a Go crash's first lines), for the log
// line of its restart. It also notes whether the process ever said it ran
// out of memory, which a long crash dump would push out of the tail.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
	oom bool
}

// oomTexts are what a process says when it cannot map memory (past
// RLIMIT_DATA): the Go runtime's "fatal error: runtime: out of memory",
// the race detector's "failed to allocate".
var oomTexts = [][]byte{[]byte("out of memory"), []byte("failed to allocate")}

// oomLookBack is how much of the earlier output is searched with a write.
const oomLookBack = 32

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// The text may straddle two writes: look at the new bytes with the
	// end of what came before.
	if !t.oom {
		seen := append(bytes.Clone(t.b[max(0, len(t.b)-oomLookBack):]), p...)
		for _, text := range oomTexts {
			t.oom = t.oom || bytes.Contains(seen, text)
		}
	}
	n := len(p)
	if len(p) > t.max {
		p = p[len(p)-t.max:]
	}
	if over := len(t.b) + len(p) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	t.b = append(t.b, p...)
	return n, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// outOfMemory reports whether the process said it ran out of memory.
func (t *tail) outOfMemory() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.oom
}
