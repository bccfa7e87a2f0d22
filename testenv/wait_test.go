package testenv

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// fatalTB records a Fatalf and ends its goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls wait with a fatalTB on a goroutine of its own and returns the
// fatal message, "" when wait returned.
func run(wait func(tb testing.TB)) string {
	tb := &fatalTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait(tb)
	}()
	<-done
	return tb.msg
}

func TestWaitFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		polls := 0
		msg := run(func(tb testing.TB) {
			WaitFor(tb, time.Second, "three polls", func() bool { polls++; return polls == 3 })
		})
		if msg != "" || polls != 3 || time.Since(start) != 3*time.Millisecond {
			t.Fatalf("held at poll %d after %v (%q), want 3 after 3ms", polls, time.Since(start), msg)
		}

		start, polls = time.Now(), 0
		msg = run(func(tb testing.TB) {
			WaitForNil(tb, time.Second, "never", func() error { polls++; return errors.New("seen 7") })
		})
		if !strings.Contains(msg, "waiting for never: seen 7") || time.Since(start) < time.Second || time.Since(start) > time.Second+maxPoll {
			t.Fatalf("failed with %q after %v", msg, time.Since(start))
		}
		if polls > 20 {
			t.Fatalf("%d polls in one second", polls)
		}
	})
}
