package bench

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// parseStatCPU returns utime+stime (fields 14 and 15) of a /proc/PID/stat
// line, in clock ticks. The command name (field 2) may hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStatCPU(stat []byte) (int64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed stat %q", truncate(stat))
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 13 {
		return 0, fmt.Errorf("stat has %d fields after the name, want at least 13", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed utime/stime %q %q", f[11], f[12])
	}
	return utime + stime, nil
}

// parseVmRSS parses a "VmRSS:   1234 kB" line into bytes; ok is false for
// other lines.
func parseVmRSS(line string) (rss int64, ok bool, err error) {
	return parseStatusKB(line, "VmRSS:")
}

// parseStatusKB reads a "Name:   123 kB" line of /proc/PID/status whose
// name is prefix, in bytes.
func parseStatusKB(line, prefix string) (n int64, ok bool, err error) {
	rest, found := strings.CutPrefix(line, prefix)
	if !found {
		return 0, false, nil
	}
	f := strings.Fields(rest)
	if len(f) != 2 || f[1] != "kB" {
		return 0, true, fmt.Errorf("rss: malformed line %q", line)
	}
	kb, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("rss: malformed line %q: %w", line, err)
	}
	return kb << 10, true, nil
}

func truncate(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}

// parseProcStatBusy parses the first line of /proc/stat ("cpu  user nice
// system idle iowait irq softirq steal ...") into the ticks all CPUs spent
// busy: everything but idle, iowait and steal (time the hypervisor gave
// to others).
func parseProcStatBusy(stat []byte) (int64, error) {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("malformed /proc/stat %q", truncate(line))
	}
	var busy int64
	for i, x := range f[1:] {
		if i >= 8 { // guest time is already in user
			break
		}
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("malformed /proc/stat field %q", x)
		}
		if i != 3 && i != 4 && i != 7 {
			if busy+v < busy {
				return 0, fmt.Errorf("/proc/stat busy time overflows")
			}
			busy += v
		}
	}
	return busy, nil
}
