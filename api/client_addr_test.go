package api

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/vigia/vigia/config"
)

// TestClientAddr: X-Forwarded-For is believed only from trusted proxies,
// read from the right, and never past the first untrusted hop.
func TestClientAddr(t *testing.T) {
	trusted, err := config.ParsePrefixList("10.0.0.0/8, 127.0.0.1, fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		peer    string
		xff     []string
		trusted []netip.Prefix
		want    string
	}{
		{"no proxy configured: the peer", "127.0.0.1:5000", []string{"203.0.113.9"}, nil, "127.0.0.1"},
		{"untrusted peer: its header ignored", "198.51.100.7:5000", []string{"203.0.113.9"}, trusted, "198.51.100.7"},
		{"trusted peer without header", "10.1.2.3:5000", nil, trusted, "10.1.2.3"},
		{"trusted peer", "10.1.2.3:5000", []string{"203.0.113.9"}, trusted, "203.0.113.9"},
		{"two trusted hops", "127.0.0.1:5000", []string{"203.0.113.9, 10.0.0.5"}, trusted, "203.0.113.9"},
		{"a spoofed left part", "10.1.2.3:5000", []string{"1.2.3.4, 203.0.113.9"}, trusted, "203.0.113.9"},
		{"a spoofed trusted address on the left", "10.1.2.3:5000", []string{"10.9.9.9, 203.0.113.9"}, trusted, "203.0.113.9"},
		{"headers in order", "10.1.2.3:5000", []string{"1.2.3.4", "203.0.113.9"}, trusted, "203.0.113.9"},
		{"all trusted: the leftmost", "10.1.2.3:5000", []string{"10.0.0.7, 127.0.0.1"}, trusted, "10.0.0.7"},
		{"a hop with a port", "10.1.2.3:5000", []string{"203.0.113.9:4711"}, trusted, "203.0.113.9"},
		{"IPv6 hop with a port", "10.1.2.3:5000", []string{"[2001:db8::1]:4711"}, trusted, "2001:db8::1"},
		{"IPv4-mapped hop", "10.1.2.3:5000", []string{"::ffff:203.0.113.9"}, trusted, "203.0.113.9"},
		{"garbage hop: the last believed", "10.1.2.3:5000", []string{"203.0.113.9, garbage"}, trusted, "10.1.2.3"},
		{"garbage behind a trusted hop", "10.1.2.3:5000", []string{"garbage, 10.0.0.5"}, trusted, "10.0.0.5"},
		{"empty header", "10.1.2.3:5000", []string{""}, trusted, "10.1.2.3"},
		{"IPv6 trusted peer", "[fd00::1]:5000", []string{"2001:db8::2"}, trusted, "2001:db8::2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := ClientAddr(r, tc.trusted); got.String() != tc.want {
				t.Errorf("ClientAddr = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestForwardedUntrusted(t *testing.T) {
	trusted, _ := config.ParsePrefixList("127.0.0.1")
	for _, tc := range []struct {
		peer, header string
		want         bool
	}{
		{"127.0.0.1:1", "", false},
		{"127.0.0.1:1", "X-Forwarded-For", false},
		{"127.0.0.2:1", "X-Forwarded-For", true},
		{"127.0.0.2:1", "Forwarded", true},
		{"127.0.0.2:1", "X-Real-Ip", true},
		{"127.0.0.2:1", "", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.peer
		if tc.header != "" {
			r.Header.Set(tc.header, "203.0.113.9")
		}
		if got := ForwardedUntrusted(r, trusted); got != tc.want {
			t.Errorf("peer %s, header %q: %v, want %v", tc.peer, tc.header, got, tc.want)
		}
	}
}
