package bus

import (
	"fmt"
	"runtime"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/testenv"
)

// TestCloseStopsGoroutines must not run in parallel with other tests: it
// compares the process's goroutine count before Open and after Close.
func TestCloseStopsGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()

	opts := testOptions(t)
	ctx := testCtx(t)
	b, err := Open(ctx, opts, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	o := NewOutbox(b, 10, zaptest.NewLogger(t))
	if err := o.EnqueueStatus(status.Status{Camera: "1", Code: status.Connecting}); err != nil {
		t.Fatal(err)
	}
	if err := o.EnqueueSegment(notice(1)); err != nil {
		t.Fatal(err)
	}
	if err := o.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if runtime.NumGoroutine() <= before {
		t.Fatal("no goroutines started; the check below would prove nothing")
	}
	o.Close()
	b.Close()

	testenv.WaitForNil(t, testWait, "goroutines after Close", func() error {
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			return fmt.Errorf("%d goroutines, %d before Open:\n%s", n, before, buf)
		}
		return nil
	})
}
