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

// TestClientAddrHeaders: behind a trusted proxy, Forwarded (RFC 7239),
// X-Forwarded-For and X-Real-IP are read; an unreadable or missing value
// names no client (known false), and the address counted is the last one
// believed, the proxy's at worst.
func TestClientAddrHeaders(t *testing.T) {
	trusted, err := config.ParsePrefixList("127.0.0.1, 10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		peer   string
		header map[string][]string
		want   string
		known  bool
	}{
		{"no header", "127.0.0.1:1", nil, "127.0.0.1", false},
		{"Forwarded for", "127.0.0.1:1", map[string][]string{"Forwarded": {"for=203.0.113.9"}}, "203.0.113.9", true},
		{"Forwarded with proto and by", "127.0.0.1:1", map[string][]string{"Forwarded": {"for=203.0.113.9;proto=https;by=10.0.0.1"}}, "203.0.113.9", true},
		{"Forwarded FOR in capitals", "127.0.0.1:1", map[string][]string{"Forwarded": {"For=203.0.113.9"}}, "203.0.113.9", true},
		{"Forwarded quoted with port", "127.0.0.1:1", map[string][]string{"Forwarded": {`for="203.0.113.9:4711"`}}, "203.0.113.9", true},
		{"Forwarded bracketed IPv6 with port", "127.0.0.1:1", map[string][]string{"Forwarded": {`for="[2001:db8:cafe::17]:4711"`}}, "2001:db8:cafe::17", true},
		{"Forwarded bracketed IPv6", "127.0.0.1:1", map[string][]string{"Forwarded": {`for="[2001:db8::1]"`}}, "2001:db8::1", true},
		{"Forwarded loopback IPv6", "127.0.0.1:1", map[string][]string{"Forwarded": {`for="[::1]"`}}, "::1", true},
		{"Forwarded two hops", "127.0.0.1:1", map[string][]string{"Forwarded": {"for=198.51.100.1, for=203.0.113.9"}}, "203.0.113.9", true},
		{"Forwarded a trusted hop skipped", "127.0.0.1:1", map[string][]string{"Forwarded": {"for=203.0.113.9, for=10.0.0.2"}}, "203.0.113.9", true},
		{"Forwarded two headers", "127.0.0.1:1", map[string][]string{"Forwarded": {"for=198.51.100.1", "for=203.0.113.9"}}, "203.0.113.9", true},
		{"Forwarded unknown", "127.0.0.1:1", map[string][]string{"Forwarded": {"for=unknown"}}, "127.0.0.1", false},
		{"Forwarded obfuscated", "127.0.0.1:1", map[string][]string{"Forwarded": {"for=_hidden"}}, "127.0.0.1", false},
		{"Forwarded without for", "127.0.0.1:1", map[string][]string{"Forwarded": {"proto=https"}}, "127.0.0.1", false},
		{"Forwarded garbage", "127.0.0.1:1", map[string][]string{"Forwarded": {`for="[203.0.113.9"`}}, "127.0.0.1", false},
		{"Forwarded unknown behind a trusted hop", "127.0.0.1:1", map[string][]string{"Forwarded": {"for=unknown, for=10.0.0.2"}}, "10.0.0.2", false},
		{"Forwarded preferred to X-Forwarded-For", "127.0.0.1:1", map[string][]string{"Forwarded": {"for=203.0.113.9"}, "X-Forwarded-For": {"127.0.0.1"}}, "203.0.113.9", true},
		{"X-Real-IP", "127.0.0.1:1", map[string][]string{"X-Real-Ip": {"203.0.113.9"}}, "203.0.113.9", true},
		{"X-Real-IP IPv6 bracketed", "127.0.0.1:1", map[string][]string{"X-Real-Ip": {"[2001:db8::1]"}}, "2001:db8::1", true},
		{"X-Real-IP garbage", "127.0.0.1:1", map[string][]string{"X-Real-Ip": {"not an address"}}, "127.0.0.1", false},
		{"X-Forwarded-For unknown", "127.0.0.1:1", map[string][]string{"X-Forwarded-For": {"unknown"}}, "127.0.0.1", false},
		{"X-Forwarded-For bracketed IPv6", "127.0.0.1:1", map[string][]string{"X-Forwarded-For": {"[2001:db8::1]"}}, "2001:db8::1", true},
		{"X-Forwarded-For rightmost untrusted", "127.0.0.1:1", map[string][]string{"X-Forwarded-For": {"127.0.0.1, 203.0.113.9, 10.0.0.3"}}, "203.0.113.9", true},
		{"X-Forwarded-For empty", "127.0.0.1:1", map[string][]string{"X-Forwarded-For": {""}}, "127.0.0.1", false},
		{"X-Forwarded-For local client", "127.0.0.1:1", map[string][]string{"X-Forwarded-For": {"127.0.0.1"}}, "127.0.0.1", true},
		{"untrusted peer", "198.51.100.7:1", map[string][]string{"Forwarded": {"for=203.0.113.9"}}, "198.51.100.7", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.peer
			for k, vs := range tc.header {
				for _, v := range vs {
					r.Header.Add(k, v)
				}
			}
			got, known := ClientAddrKnown(r, trusted)
			if got.String() != tc.want || known != tc.known {
				t.Errorf("ClientAddrKnown = %s, %v; want %s, %v", got, known, tc.want, tc.known)
			}
			// A client the proxy did not name is never local.
			if local := LocalClient(r, trusted); local != (tc.known && got.IsLoopback() && tc.peer == "127.0.0.1:1") {
				t.Errorf("LocalClient = %v", local)
			}
		})
	}
}
