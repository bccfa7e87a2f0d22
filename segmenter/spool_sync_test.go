package segmenter

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGroupSyncCoversEveryCaller: callers that come while a round runs
// share the next round, and none returns before a round that started
// after its call has finished; a failed round's error reaches its callers.
func TestGroupSyncCoversEveryCaller(t *testing.T) {
	var rounds atomic.Int64
	gate := make(chan struct{})
	g := newGroupSyncFunc(nil, func() error {
		rounds.Add(1)
		<-gate
		return nil
	})
	const callers = 50
	returned := make(chan int64, callers) // rounds started when each returned
	first := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		close(first)
		if err := g.sync(); err != nil {
			t.Error(err)
		}
		returned <- rounds.Load()
	}()
	<-first
	waitUntil(t, func() bool { return rounds.Load() == 1 })
	// Round 1 runs: everyone else comes now and must wait for round 2.
	for range callers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.sync(); err != nil {
				t.Error(err)
			}
			returned <- rounds.Load()
		}()
	}
	waitUntil(t, func() bool { return g.waiters() == callers-1 })
	gate <- struct{}{} // round 1 ends; one waiter starts round 2
	waitUntil(t, func() bool { return rounds.Load() == 2 })
	gate <- struct{}{} // round 2 ends
	wg.Wait()
	close(returned)
	early := 0 // callers back before round 2 started: only the first may be
	for r := range returned {
		if r < 2 {
			early++
		}
	}
	if early > 1 {
		t.Errorf("%d callers returned before round 2, want at most 1", early)
	}
	if rounds.Load() != 2 {
		t.Errorf("%d rounds for one caller and %d waiting together, want 2", rounds.Load(), callers-1)
	}

	boom := errors.New("disk gone")
	g = newGroupSyncFunc(nil, func() error { return boom })
	if err := g.sync(); !errors.Is(err, boom) {
		t.Errorf("failed round: %v", err)
	}
}

func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}
