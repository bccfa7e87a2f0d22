//go:build linux && !(amd64 || arm64)

package decodeproc

import (
	"fmt"
	"runtime"
)

// loadSeccomp loads nothing: the filter is written for amd64 and arm64.
func loadSeccomp() error {
	return fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
}
