package testenv

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func live(url string) bool {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func TestMinIOStopStart(t *testing.T) {
	s := MinIO(t)
	health := s.URL() + "/minio/health/live"
	if !live(health) {
		t.Fatal("minio not live after MinIO returned")
	}
	if s.AccessKey == "" || s.SecretKey == "" || !strings.HasPrefix(s.Endpoint, "127.0.0.1:") {
		t.Fatalf("bad server fields: %+v", s)
	}
	s.Stop()
	if live(health) {
		t.Fatal("minio still answering after Stop")
	}
	s.Stop() // idempotent
	s.Start()
	if !live(health) {
		t.Fatal("minio not live after restart")
	}
}

func TestNewBucketName(t *testing.T) {
	valid := regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$`)
	tests := []struct{ name string }{
		{name: "Simple"},
		{name: "With Spaces and_Underscores/And/Slashes"},
		{name: strings.Repeat("VeryLong", 20)},
		{name: "---"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, b := NewBucketName(t), NewBucketName(t)
			if !valid.MatchString(a) || strings.Contains(a, "--") {
				t.Errorf("invalid bucket name %q", a)
			}
			if a == b {
				t.Errorf("two calls gave the same name %q", a)
			}
		})
	}
}

func TestToolsDir(t *testing.T) {
	tests := []struct {
		name  string
		tools string
		xdg   string
		home  string
		want  string
	}{
		{name: "explicit", tools: "/opt/tools", xdg: "/x", home: "/h", want: "/opt/tools"},
		{name: "xdg", xdg: "/x", home: "/h", want: "/x/vigia/tools"},
		{name: "home", home: "/h", want: "/h/.cache/vigia/tools"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("VIGIA_TOOLS", tc.tools)
			t.Setenv("XDG_CACHE_HOME", tc.xdg)
			t.Setenv("HOME", tc.home)
			if got := ToolsDir(); got != tc.want {
				t.Errorf("ToolsDir() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFreePort(t *testing.T) {
	lo, hi := freePortRange()
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatal(err)
	}
	var eLo, eHi int
	if _, err := fmt.Sscan(string(b), &eLo, &eHi); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for range 200 {
		p := FreePort(t)
		if p < lo || p >= hi || p > 65535 {
			t.Fatalf("FreePort() = %d, want in [%d, %d)", p, lo, hi)
		}
		if p >= eLo && p <= eHi {
			t.Fatalf("FreePort() = %d, in the ephemeral range [%d, %d]", p, eLo, eHi)
		}
		if seen[p] {
			t.Fatalf("FreePort() returned %d twice", p)
		}
		seen[p] = true
	}
	// Pairs start even, and neither port of a pair is returned again.
	for range 50 {
		p := FreePortPair(t)
		if p%2 != 0 || p < lo || p+1 >= hi {
			t.Fatalf("FreePortPair() = %d, want even, pair in [%d, %d)", p, lo, hi)
		}
		for _, q := range []int{p, p + 1} {
			if seen[q] {
				t.Fatalf("FreePortPair() returned %d, returned before", q)
			}
			seen[q] = true
		}
		if q := FreePort(t); seen[q] {
			t.Fatalf("FreePort() returned %d, returned before", q)
		} else {
			seen[q] = true
		}
	}
	// A port in use is never returned.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if portFree(l.Addr().(*net.TCPAddr).Port) {
		t.Fatalf("portFree(%d) with a listener on it", l.Addr().(*net.TCPAddr).Port)
	}
}
