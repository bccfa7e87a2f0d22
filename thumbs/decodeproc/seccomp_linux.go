//go:build linux && (amd64 || arm64)

package decodeproc

import (
	"fmt"
	"os"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/sys/unix"
)

// deniedSyscalls are refused (EPERM) to a decoder process: it reads
// requests from standard input and writes results to standard output,
// and needs no network, no new program, no file (libavcodec opens none
// once loaded; the Go runtime opened what it needs before main), no other
// process and nothing of the kernel's administration. A name the
// architecture lacks (open on arm64) is skipped.
//
// The filter is a deny-list, not an allow-list: the Go runtime, glibc and
// libavcodec together use a set of system calls that changes with their
// versions (clone3, rseq, membarrier, ...), and a call missing from an
// allow-list would kill every decoder process of a node after an upgrade.
var deniedSyscalls = []string{
	// network
	"socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
	"sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
	// new programs and processes (threads use clone, which stays for
	// them: cloneRules)
	"execve", "execveat", "fork", "vfork",
	// files
	"open", "openat", "openat2", "creat", "open_by_handle_at", "name_to_handle_at",
	"mkdir", "mkdirat", "mknod", "mknodat", "rmdir", "unlink", "unlinkat",
	"rename", "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat",
	"chmod", "fchmod", "fchmodat", "chown", "fchown", "fchownat", "lchown",
	"truncate", "chdir", "fchdir", "chroot",
	"setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
	"inotify_init", "inotify_init1", "fanotify_init",
	// other processes
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
	"pidfd_open", "pidfd_getfd", "pidfd_send_signal", "rt_sigqueueinfo", "tkill",
	// identity
	"setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
	"setgroups", "setfsuid", "setfsgid", "capset",
	// the kernel's administration and its larger attack surface
	"mount", "umount2", "pivot_root", "unshare", "setns", "swapon", "swapoff",
	"reboot", "kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "acct", "settimeofday", "clock_settime", "adjtimex",
	"sethostname", "setdomainname", "iopl", "ioperm", "quotactl", "syslog",
	"bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "personality",
	"move_pages", "migrate_pages", "mbind", "set_mempolicy",
}

// cloneNamespaces are clone's flags that make new namespaces (unshare
// and setns, the other ways into a namespace, are denied outright). A
// decoder process needs none, and a user namespace is where most kernel
// privilege escalations start.
const cloneNamespaces = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// cloneRules refuse (EPERM) a clone that makes a namespace or a process
// (no CLONE_THREAD: fork by another name); threads, which the Go runtime
// and glibc make with clone and CLONE_THREAD, stay. clone3 passes its
// flags in memory, where a filter cannot read them: it is answered
// ENOSYS, on which glibc falls back to clone (the Go runtime uses clone).
// A decoder process thus never has another process, and needs no
// RLIMIT_NPROC, which counts every process of the user, the recorder's
// threads included, and would starve the recorder's decoders instead.
var cloneRules = []seccomp.NameWithConditions{
	{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsSet, Value: cloneNamespaces}}},
	{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: 0, Operation: seccomp.BitsNotSet, Value: unix.CLONE_THREAD}}},
}

// actionENOSYS answers a call as if the kernel lacked it.
const actionENOSYS = seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)

// ownProcessOnly are signal calls allowed only towards this process (the
// Go runtime signals its own threads with tgkill and re-raises fatal
// signals with kill).
var ownProcessOnly = []string{"kill", "tgkill", "rt_tgsigqueueinfo"}

// loadSeccomp loads the decoder process's filter on every thread.
func loadSeccomp() error {
	info, err := arch.GetInfo("")
	if err != nil {
		return err
	}
	var names []string
	for _, n := range deniedSyscalls {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	pid := uint64(os.Getpid())
	var own []seccomp.NameWithConditions
	for _, n := range ownProcessOnly {
		own = append(own, seccomp.NameWithConditions{Name: n, Conditions: seccomp.ArgumentConditions{
			{Argument: 0, Operation: seccomp.NotEqual, Value: pid},
		}})
	}
	f := seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{
				{Action: seccomp.ActionErrno, Names: names},
				{Action: seccomp.ActionErrno, NamesWithCondtions: own},
				{Action: seccomp.ActionErrno, NamesWithCondtions: cloneRules},
				{Action: actionENOSYS, Names: []string{"clone3"}},
			},
		},
	}
	if err := seccomp.LoadFilter(f); err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	return nil
}
