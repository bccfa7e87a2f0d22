package testenv

import (
	"errors"
	"testing"
	"time"
)

// Polling pauses: the first poll is at once, the next after minPoll, each
// pause doubling up to maxPoll, so a condition that holds soon is seen soon
// and a long wait costs few polls.
const (
	minPoll = time.Millisecond
	maxPoll = 100 * time.Millisecond
)

// errNotYet is the error of a condition that does not hold yet.
var errNotYet = errors.New("condition not met")

// WaitFor polls cond until it holds, failing t after timeout. It is the
// tests' one polling loop: waits poll, never sleep a fixed time.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	WaitForNil(t, timeout, what, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	})
}

// WaitForNil polls cond until it returns nil, failing t after timeout with
// cond's last error, which says what was seen instead.
func WaitForNil(t testing.TB, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	pause := minPoll
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			if errors.Is(err, errNotYet) {
				t.Fatalf("timed out after %v waiting for %s", timeout, what)
			}
			t.Fatalf("timed out after %v waiting for %s: %v", timeout, what, err)
		}
		time.Sleep(min(pause, time.Until(deadline)+time.Millisecond))
		pause = min(2*pause, maxPoll)
	}
}
