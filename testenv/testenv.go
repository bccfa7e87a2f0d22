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
	"net"
	"os"
	"path/filepath"
	"strings"
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

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		t.Fatalf("free port: %v", err)
	}
	return port
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
