package api

import (
	"sync"
	"testing"
	"time"
)

func TestThrottleReserve(t *testing.T) {
	t0 := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	th := newThrottle(15 * time.Minute)
	addr, acct := limit{"addr:a", 3}, limit{"email:x", 5}
	for i := range 3 {
		if ok, _ := th.reserve([]limit{addr, acct}, t0.Add(time.Duration(i)*time.Minute)); !ok {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	ok, wait := th.reserve([]limit{addr, acct}, t0.Add(5*time.Minute))
	if ok || wait != 10*time.Minute {
		t.Fatalf("4th attempt: ok %v, wait %v; want refused for 10m (the first leaves the window at 15m)", ok, wait)
	}
	// The refused attempt counted nowhere: the account has 2 left.
	other := limit{"addr:b", 3}
	for i := range 2 {
		if ok, _ := th.reserve([]limit{other, acct}, t0.Add(6*time.Minute)); !ok {
			t.Fatalf("account attempt %d from another address refused", 4+i)
		}
	}
	if ok, _ := th.reserve([]limit{other, acct}, t0.Add(6*time.Minute)); ok {
		t.Fatal("6th attempt on the account accepted")
	}
	// A success gives its attempt back.
	th.release("addr:a", t0.Add(2*time.Minute))
	if ok, _ := th.reserve([]limit{addr}, t0.Add(7*time.Minute)); !ok {
		t.Fatal("the released place was not given back")
	}
	// The window slides.
	if ok, _ := th.reserve([]limit{addr}, t0.Add(15*time.Minute)); !ok {
		t.Fatal("the first attempt did not leave the window")
	}
	th.reset("email:x")
	if ok, _ := th.reserve([]limit{acct}, t0.Add(8*time.Minute)); !ok {
		t.Fatal("reset did not clear the account")
	}
}

// TestThrottleParallel: attempts running at once are each counted before
// any finishes, so no more than max of them get through.
func TestThrottleParallel(t *testing.T) {
	th := newThrottle(time.Minute)
	now := time.Now()
	var mu sync.Mutex
	passed := 0
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if ok, _ := th.reserve([]limit{{"addr:a", 5}}, now); ok {
				mu.Lock()
				passed++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if passed != 5 {
		t.Fatalf("%d attempts passed, want 5", passed)
	}
}
