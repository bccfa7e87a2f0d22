package decoder

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestMemoryRelease: memory is released once every interval until Close;
// an interval of 0 releases nothing.
func TestMemoryRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		m := startRelease(time.Minute, func() { n.Add(1) })
		time.Sleep(3*time.Minute + time.Second)
		synctest.Wait()
		if got := n.Load(); got != 3 {
			t.Fatalf("released %d times in 3 minutes, want 3", got)
		}
		m.Close()
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := n.Load(); got != 3 {
			t.Fatalf("released %d times after Close, want 3", got)
		}
	})
	if m := startRelease(0, func() { t.Fatal("released") }); m != nil {
		t.Fatal("an interval of 0 starts a release")
	}
	StartMemoryRelease(0).Close()
}
