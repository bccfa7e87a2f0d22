package api

import (
	"fmt"
	"net/netip"
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

// TestThrottleAddrKey: an IPv6 client is counted by its /64, which it
// holds whole; an IPv4 client (mapped or not) by its address.
func TestThrottleAddrKey(t *testing.T) {
	key := func(s string) string { return addrThrottleKey(netip.MustParseAddr(s)) }
	if a, b := key("2001:db8:1:2::1"), key("2001:db8:1:2:ffff:ffff:ffff:fffe"); a != b {
		t.Errorf("one /64, two keys: %s, %s", a, b)
	}
	if a, b := key("2001:db8:1:2::1"), key("2001:db8:1:3::1"); a == b {
		t.Errorf("two /64s, one key: %s", a)
	}
	if a, b := key("192.0.2.1"), key("::ffff:192.0.2.1"); a != b || a != "addr:192.0.2.1" {
		t.Errorf("IPv4 keys %s and %s, want addr:192.0.2.1", a, b)
	}
	if a, b := key("192.0.2.1"), key("192.0.2.2"); a == b {
		t.Errorf("two IPv4 addresses, one key: %s", a)
	}
	// Attempts from fresh addresses of one /64 share its limit.
	th := newThrottle(time.Minute)
	now := time.Now()
	for i := range 4 {
		a := netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(i + 1)})
		ok, _ := th.reserve([]limit{{addrThrottleKey(a), 3}}, now)
		if ok != (i < 3) {
			t.Errorf("attempt %d from %s: ok %v", i+1, a, ok)
		}
	}
}

// TestThrottlePruneKeepsLockouts: locked accounts, then a flood of
// attempts from more addresses than the throttle keeps. Pruning drops the
// addresses, never a lockout: every locked account stays locked until its
// attempts leave the window.
func TestThrottlePruneKeepsLockouts(t *testing.T) {
	th := newThrottle(15 * time.Minute)
	t0 := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	const accounts = 100
	acct := func(i int) limit { return limit{fmt.Sprintf("email:u%d@example.com", i), 5} }
	for i := range accounts {
		for range 5 {
			if ok, _ := th.reserve([]limit{{"addr:192.0.2.1", 1 << 30}, acct(i)}, t0); !ok {
				t.Fatal("attempt refused before the lockout")
			}
		}
	}
	now := t0.Add(time.Minute)
	for i := range 3 * maxThrottleKeys / 2 {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		if ok, _ := th.reserve([]limit{{addrThrottleKey(a), 10}}, now); !ok {
			t.Fatalf("attempt from %s refused", a)
		}
	}
	th.mu.Lock()
	n := len(th.hits)
	th.mu.Unlock()
	if n > maxThrottleKeys {
		t.Errorf("throttle holds %d keys, bound %d", n, maxThrottleKeys)
	}
	for i := range accounts {
		if ok, _ := th.reserve([]limit{{"addr:198.51.100.1", 10}, acct(i)}, now); ok {
			t.Fatalf("account %d unlocked by the flood", i)
		}
	}
	// The lockouts end with the window.
	if ok, _ := th.reserve([]limit{acct(0)}, t0.Add(15*time.Minute)); !ok {
		t.Error("lockout outlived the window")
	}
}
