//go:build linux

package decodeproc

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// processCPU returns the user and system CPU time of this process.
func processCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sandboxed says what enterSandbox could not do without failing.
type sandboxed struct {
	seccompErr error // why no seccomp filter is loaded, nil when one is
}

// enterSandbox restricts the decoder process: descriptors inherited past
// standard error closed, RLIMIT_DATA at memory (0: unchanged), no core
// dumps, at most 64 descriptors, not dumpable (no ptrace by other
// processes of the user), no new privileges, and the seccomp filter of
// loadSeccomp (deniedSyscalls, cloneRules). Only the filter may fail
// without failing the process.
func enterSandbox(memory int64) (sandboxed, error) {
	closeInherited()
	limits := []struct {
		name     string
		resource int
		value    uint64
	}{
		{"RLIMIT_CORE", unix.RLIMIT_CORE, 0},
		{"RLIMIT_NOFILE", unix.RLIMIT_NOFILE, 64},
	}
	if memory > 0 {
		limits = append(limits, struct {
			name     string
			resource int
			value    uint64
		}{"RLIMIT_DATA", unix.RLIMIT_DATA, uint64(memory)})
	}
	for _, l := range limits {
		if err := unix.Setrlimit(l.resource, &unix.Rlimit{Cur: l.value, Max: l.value}); err != nil {
			return sandboxed{}, fmt.Errorf("%s %d: %w", l.name, l.value, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return sandboxed{}, fmt.Errorf("PR_SET_DUMPABLE: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return sandboxed{}, fmt.Errorf("PR_SET_NO_NEW_PRIVS: %w", err)
	}
	return sandboxed{seccompErr: loadSeccomp()}, nil
}

// closeInherited closes the descriptors past standard error that the
// process inherited: os/exec passes only standard input, output and error,
// but a descriptor the parent holds without close-on-exec (one it
// inherited itself) would pass too. The Go runtime's own epoll and eventfd
// descriptors, which it may have opened before main, are kept.
func closeInherited() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // the directory's own descriptor, closed
		}
		if target == "anon_inode:[eventpoll]" || target == "anon_inode:[eventfd]" {
			continue
		}
		_ = unix.Close(fd)
	}
}
