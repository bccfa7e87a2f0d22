package bench

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// setProcAttr makes a child die with this process.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// selfCPU returns the user plus system CPU time used by this process.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// clockTicks is the kernel's USER_HZ (`getconf CLK_TCK`), the unit of the
// CPU times in /proc/PID/stat; 100 when getconf is not available.
var clockTicks = sync.OnceValue(func() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return 100
})

// procCPU returns the user plus system CPU time of process pid (all its
// threads), from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	ticks, err := parseStatCPU(b)
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	return time.Duration(ticks) * time.Second / time.Duration(clockTicks()), nil
}

// machineCPU returns the busy time of all CPUs of the machine, from
// /proc/stat: every process and kernel thread (writeback, journal).
func machineCPU() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	ticks, err := parseProcStatBusy(b)
	if err != nil {
		return 0, err
	}
	return time.Duration(ticks) * time.Second / time.Duration(clockTicks()), nil
}

// procRSS returns the resident set size of process pid (0 for this
// process), from VmRSS in /proc/PID/status.
func procRSS(pid int) (int64, error) {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("rss: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rss, ok, err := parseVmRSS(sc.Text()); ok {
			return rss, err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("rss: read %s: %w", path, err)
	}
	return 0, fmt.Errorf("rss: no VmRSS in %s", path)
}

// procRSSParts returns the anonymous and file-backed parts of the calling
// process's resident set.
func procRSSParts() (anon, file int64, err error) { return pidRSSParts(0) }

// pidRSSParts returns the anonymous and file-backed parts of process
// pid's resident set (0: this process).
func pidRSSParts(pid int) (anon, file int64, err error) {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("rss: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if n, ok, err := parseStatusKB(line, "RssAnon:"); ok && err == nil {
			anon = n
		}
		if n, ok, err := parseStatusKB(line, "RssFile:"); ok && err == nil {
			file = n
		}
	}
	return anon, file, nil
}
