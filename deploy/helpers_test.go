package deploy

import (
	"testing"
	"time"

	"github.com/vigia/vigia/testenv"
)

// syncBuffer collects a process's output.
type syncBuffer = testenv.Buffer

// buildVigia builds the vigia binary once per test process.
func buildVigia(t *testing.T) string { return testenv.VigiaBinary(t) }

// waitFor polls cond until it holds.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	testenv.WaitFor(t, timeout, what, cond)
}
