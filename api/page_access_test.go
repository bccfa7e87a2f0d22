package api

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// TestPageAccess: the node page opens with an operator token from
// anywhere, and without one only in loopback mode to a client on this
// machine that no unknown proxy forwarded.
func TestPageAccess(t *testing.T) {
	local := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	for _, tc := range []struct {
		name     string
		loopback bool
		trusted  []netip.Prefix
		peer     string
		query    string
		header   map[string]string
		want     bool
		host     string // Host header; 127.0.0.1:8080 when empty
	}{
		{"local client, loopback", true, nil, "127.0.0.1:4000", "", nil, true, ""},
		{"local client, not loopback", false, nil, "127.0.0.1:4000", "", nil, false, ""},
		{"remote client, loopback", true, nil, "203.0.113.9:4000", "", nil, false, ""},
		{"operator token", false, nil, "203.0.113.9:4000", "?token=op-1", nil, true, ""},
		{"second operator token", false, nil, "203.0.113.9:4000", "?token=op-2", nil, true, ""},
		{"wrong token", false, nil, "203.0.113.9:4000", "?token=op-3", nil, false, ""},
		{"empty token", false, nil, "203.0.113.9:4000", "?token=", nil, false, ""},
		{"through an unknown proxy", true, nil, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "203.0.113.9"}, false, ""},
		{"through an unknown proxy, Forwarded", true, nil, "127.0.0.1:4000", "", map[string]string{"Forwarded": "for=203.0.113.9"}, false, ""},
		{"through an unknown proxy, X-Real-IP", true, nil, "127.0.0.1:4000", "", map[string]string{"X-Real-IP": "203.0.113.9"}, false, ""},
		{"through an unknown proxy, a local client claimed", true, nil, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "127.0.0.1"}, false, ""},
		{"remote client behind a trusted proxy", true, local, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "203.0.113.9"}, false, ""},
		{"spoofed local client behind a trusted proxy", true, local, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "127.0.0.1, 203.0.113.9"}, false, ""},
		{"local client behind a trusted proxy", true, local, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "127.0.0.1"}, true, ""},
		{"operator token through an unknown proxy", true, nil, "127.0.0.1:4000", "?token=op-1", map[string]string{"X-Forwarded-For": "203.0.113.9"}, true, ""},
		{"trusted local proxy without a header", true, local, "127.0.0.1:4000", "", nil, false, ""},
		{"trusted local proxy, X-Forwarded-For unknown", true, local, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "unknown"}, false, ""},
		{"trusted local proxy, X-Real-IP", true, local, "127.0.0.1:4000", "", map[string]string{"X-Real-IP": "203.0.113.9"}, false, ""},
		{"trusted local proxy, Forwarded", true, local, "127.0.0.1:4000", "", map[string]string{"Forwarded": "for=203.0.113.9"}, false, ""},
		{"trusted local proxy, Forwarded IPv6", true, local, "127.0.0.1:4000", "", map[string]string{"Forwarded": `for="[2001:db8::1]:4711"`}, false, ""},
		{"trusted local proxy, X-Forwarded-For bracketed IPv6", true, local, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "[2001:db8::1]"}, false, ""},
		{"trusted local proxy, Forwarded local client", true, local, "127.0.0.1:4000", "", map[string]string{"Forwarded": `for="[::1]"`}, true, ""},
		{"local client, Host localhost", true, nil, "127.0.0.1:4000", "", nil, true, "LocalHost:8080"},
		{"local client, Host localhost without port", true, nil, "127.0.0.1:4000", "", nil, true, "localhost"},
		{"local client, Host ::1", true, nil, "[::1]:4000", "", nil, true, "[::1]:8080"},
		{"local client, Host 127.0.0.2", true, nil, "127.0.0.1:4000", "", nil, true, "127.0.0.2"},
		{"local client, Host the public host", true, nil, "127.0.0.1:4000", "", nil, true, "Vigia.Example:8080"},
		{"DNS rebinding: Host attacker.example", true, nil, "127.0.0.1:4000", "", nil, false, "attacker.example"},
		{"DNS rebinding: Host attacker.example with port", true, nil, "127.0.0.1:4000", "", nil, false, "attacker.example:8080"},
		{"Host localhost.attacker.example", true, nil, "127.0.0.1:4000", "", nil, false, "localhost.attacker.example"},
		{"Host a private address", true, nil, "127.0.0.1:4000", "", nil, false, "192.168.1.2:8080"},
		{"operator token, Host attacker.example", true, nil, "127.0.0.1:4000", "?token=op-1", nil, true, "attacker.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/"+tc.query, nil)
			r.RemoteAddr = tc.peer
			r.Host = "127.0.0.1:8080"
			if tc.host != "" {
				r.Host = tc.host
			}
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			if got := PageAccess([]string{"op-1", "op-2"}, tc.trusted, tc.loopback, "vigia.example")(r); got != tc.want {
				t.Errorf("PageAccess = %v, want %v", got, tc.want)
			}
		})
	}
}
