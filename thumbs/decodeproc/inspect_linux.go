//go:build linux

package decodeproc

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// inspect describes the process's sandbox as lines of "name value", for
// tests: environment size, open descriptors and what they are, limits,
// flags, and what a network, file and signal call get.
func inspect() string {
	var b strings.Builder
	fmt.Fprintf(&b, "env %d\n", len(os.Environ()))
	for fd := 0; fd < 1024; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			continue
		}
		target, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
		fmt.Fprintf(&b, "fd %d %s\n", fd, target)
	}
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_DATA, &rl) == nil {
		fmt.Fprintf(&b, "rlimit_data %d\n", rl.Cur)
	}
	if unix.Getrlimit(unix.RLIMIT_CORE, &rl) == nil {
		fmt.Fprintf(&b, "rlimit_core %d\n", rl.Cur)
	}
	nnp, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	fmt.Fprintf(&b, "no_new_privs %d\n", nnp)
	mode, _ := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	fmt.Fprintf(&b, "seccomp %d\n", mode)
	dumpable, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	fmt.Fprintf(&b, "dumpable %d\n", dumpable)
	pgid, _ := unix.Getpgid(0)
	fmt.Fprintf(&b, "own_group %t\n", pgid == os.Getpid())
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err == nil {
		_ = unix.Close(fd)
	}
	fmt.Fprintf(&b, "socket %s\n", errName(err))
	fd, err = unix.Open("/proc/self/status", unix.O_RDONLY, 0)
	if err == nil {
		_ = unix.Close(fd)
	}
	fmt.Fprintf(&b, "open %s\n", errName(err))
	fmt.Fprintf(&b, "signal_parent %s\n", errName(unix.Kill(os.Getppid(), 0)))
	// Flags the kernel refuses (EINVAL) whatever the filter: no process
	// is made either way, and EPERM says the filter refused them first.
	_, _, e := unix.RawSyscall(unix.SYS_CLONE, unix.CLONE_NEWUSER|unix.CLONE_THREAD, 0, 0)
	fmt.Fprintf(&b, "clone_namespace %s\n", errName(errnoOf(e)))
	_, _, e = unix.RawSyscall(unix.SYS_CLONE, unix.CLONE_SIGHAND, 0, 0)
	fmt.Fprintf(&b, "clone_process %s\n", errName(errnoOf(e)))
	_, _, e = unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
	fmt.Fprintf(&b, "clone3 %s\n", errName(errnoOf(e)))
	return b.String()
}

// errnoOf is e as an error, nil for none.
func errnoOf(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// errName is "ok" or the error number's name.
func errName(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := err.(unix.Errno); ok {
		return unix.ErrnoName(e)
	}
	return err.Error()
}
