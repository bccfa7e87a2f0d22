//go:build !linux

package decodeproc

import (
	"errors"
	"time"
)

// processCPU returns 0: the CPU time is read on Linux only.
func processCPU() time.Duration { return 0 }

type sandboxed struct {
	seccompErr error
}

// enterSandbox does nothing outside Linux: the process runs with the
// parent's limits, which is said on its standard error.
func enterSandbox(memory int64) (sandboxed, error) {
	return sandboxed{seccompErr: errors.New("no sandbox outside Linux")}, nil
}
