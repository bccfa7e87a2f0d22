package segmenter

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vigia/vigia/testenv"
)

// TestGroupSyncCoversEveryCaller: callers that come while a round runs
// share the next round, and none returns before a round that started
// after its call has finished; a failed round's error reaches its callers.
func TestGroupSyncCoversEveryCaller(t *testing.T) {
	var rounds atomic.Int64
	gate := make(chan struct{})
	g := newGroupSyncFunc(nil, 0, func() error {
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
	testenv.WaitFor(t, 10*time.Second, "round 1", func() bool { return rounds.Load() == 1 })
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
	// Everyone waits, the first caller too.
	testenv.WaitFor(t, 10*time.Second, "every caller waiting", func() bool { return g.waiters() == callers })
	gate <- struct{}{} // round 1 ends; one waiter starts round 2
	testenv.WaitFor(t, 10*time.Second, "round 2", func() bool { return rounds.Load() == 2 })
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
	g = newGroupSyncFunc(nil, 0, func() error { return boom })
	if err := g.sync(); !errors.Is(err, boom) {
		t.Errorf("failed round: %v", err)
	}
}

// sync returns once a round that started after the call has finished.
func (g *groupSync) sync() error { return g.wait(g.request(true)) }

// TestGroupSyncRoundsPaced: rounds asked for without waiting start at most
// every `every`, each covering every request made before it started; an
// urgent request or a hurry starts the round at once; close runs a round
// still waiting for its time, and rounds asked for afterwards fail.
func TestGroupSyncRoundsPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const every = 250 * time.Millisecond
		var starts []time.Duration
		t0 := time.Now()
		g := newGroupSyncFunc(nil, every, func() error {
			starts = append(starts, time.Since(t0))
			time.Sleep(10 * time.Millisecond) // the round's own time
			return nil
		})
		// Fragments of 50 cameras end over a second, 20 ms apart.
		var targets []uint64
		for range 50 {
			targets = append(targets, g.request(false))
			time.Sleep(20 * time.Millisecond)
		}
		synctest.Wait()
		for _, tg := range targets {
			if err := g.wait(tg); err != nil {
				t.Fatal(err)
			}
		}
		// 1 s of requests: a round at once, then one every 250 ms.
		if len(starts) < 4 || len(starts) > 6 {
			t.Errorf("%d rounds for 50 requests over 1 s, want 4 to 6: %v", len(starts), starts)
		}
		for i := 1; i < len(starts); i++ {
			if gap := starts[i] - starts[i-1]; gap < every {
				t.Errorf("rounds %d and %d started %v apart, want at least %v", i-1, i, gap, every)
			}
		}

		// Urgent: the round starts at once, not 250 ms after the last.
		before := len(starts)
		at := time.Now()
		g.request(false) // waits for its time...
		tg := g.request(true)
		if err := g.wait(tg); err != nil {
			t.Fatal(err)
		}
		if len(starts) != before+1 || time.Since(at) > 20*time.Millisecond {
			t.Errorf("urgent round: %d rounds, done after %v", len(starts)-before, time.Since(at))
		}

		// hurry: a round waiting for its time starts now.
		time.Sleep(time.Millisecond)
		tg = g.request(false)
		at = time.Now()
		g.hurry(tg)
		if err := g.wait(tg); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(at); d > 20*time.Millisecond {
			t.Errorf("hurried round done after %v", d)
		}

		// close runs the round still waiting, then fails later requests.
		time.Sleep(time.Millisecond)
		tg = g.request(false)
		n := len(starts)
		g.close()
		if err := g.wait(tg); err != nil || len(starts) != n+1 {
			t.Errorf("round pending at close: err %v, %d rounds run", err, len(starts)-n)
		}
		if err := g.sync(); !errors.Is(err, errSyncClosed) {
			t.Errorf("round after close: %v, want errSyncClosed", err)
		}
	})
}
