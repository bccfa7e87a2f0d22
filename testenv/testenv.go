// Package testenv starts real servers for tests: a MinIO process for the S3
// store, and helpers for the ports and tools they need.
//
// Tools are binaries built once outside the repository by "make deps" into
// ToolsDir. A test that needs a missing tool fails and says so; it is never
// skipped.
package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// ToolsDir returns the directory holding test tools: $VIGIA_TOOLS, or
// ${XDG_CACHE_HOME:-$HOME/.cache}/vigia/tools.
func ToolsDir() string {
	if d := os.Getenv("VIGIA_TOOLS"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "vigia", "tools")
}

// Tool returns the path of the tool binary name in ToolsDir, failing the test
// with a hint to run "make deps" when it is missing.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(ToolsDir(), name)
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		t.Fatalf("test tool %s not found at %s: run `make deps` (or set VIGIA_TOOLS)", name, p)
	}
	return p
}

// FreePort returns a port on 127.0.0.1, free for TCP and UDP a moment ago,
// that this process has not returned before.
//
// The port is taken below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range): a port from that range, as
// "127.0.0.1:0" gives, can be taken as the source port of any outgoing
// connection on the machine (a NATS route, an S3 request) between the moment
// it is returned and the moment a server binds it. Below the range only an
// explicit bind can take it.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := PickPort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// PickPort is FreePort for code without a test at hand.
func PickPort() (int, error) { return pickPorts(1) }

// FreePortPair returns an even port p such that p and p+1 are both what
// FreePort would return: RTP and RTCP over UDP take such a pair (RFC 3550,
// 11). Both are recorded, so FreePort returns neither later.
func FreePortPair(t testing.TB) int {
	t.Helper()
	p, err := pickPorts(2)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pickPorts returns the first of n consecutive free ports not returned
// before, even when n is 2, and records them all.
func pickPorts(n int) (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	lo, hi := freePortRange()
	if n > 1 {
		lo += lo % 2
	}
	slots := (hi - lo) / n
	start := mrand.IntN(slots)
outer:
	for i := range slots {
		p := lo + ((start+i)%slots)*n
		for q := p; q < p+n; q++ {
			if portsGiven[q] || !portFree(q) {
				continue outer
			}
		}
		for q := p; q < p+n; q++ {
			portsGiven[q] = true
		}
		return p, nil
	}
	return 0, fmt.Errorf("free port: no %d free in [%d, %d)", n, lo, hi)
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// freePortRange returns [lo, hi): the ports from 10000 up to the start of the
// kernel's ephemeral range, or above its end when that leaves too few.
func freePortRange() (lo, hi int) {
	eLo, eHi := 32768, 60999 // Linux's default
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			a, errA := strconv.Atoi(f[0])
			z, errZ := strconv.Atoi(f[1])
			if errA == nil && errZ == nil && a <= z {
				eLo, eHi = a, z
			}
		}
	}
	if eLo-10000 >= 2000 {
		return 10000, eLo
	}
	if 65536-(eHi+1) >= 2000 {
		return eHi + 1, 65536
	}
	return 10000, 65536 // no room outside the range: any port, checked
}

// portFree reports whether 127.0.0.1:p can be bound for TCP and for UDP.
func portFree(p int) bool {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	defer l.Close()
	u, err := net.ListenPacket("udp", addr)
	if err != nil {
		return false
	}
	u.Close()
	return true
}

// NewBucketName returns a valid S3 bucket name unique to this test run,
// derived from the test's name.
func NewBucketName(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	for _, c := range strings.ToLower(t.Name()) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "test"
	}
	return "t-" + name + "-" + randomHex(t, 6)
}

// randomHex returns n random bytes as hex.
func randomHex(t testing.TB, n int) string {
	t.Helper()
	buf := make([]byte, n)
	if _, err := rand.Read(buf); err != nil {
		t.Fatalf("random: %v", err)
	}
	return hex.EncodeToString(buf)
}
