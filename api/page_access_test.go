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
	}{
		{"local client, loopback", true, nil, "127.0.0.1:4000", "", nil, true},
		{"local client, not loopback", false, nil, "127.0.0.1:4000", "", nil, false},
		{"remote client, loopback", true, nil, "203.0.113.9:4000", "", nil, false},
		{"operator token", false, nil, "203.0.113.9:4000", "?token=op-1", nil, true},
		{"second operator token", false, nil, "203.0.113.9:4000", "?token=op-2", nil, true},
		{"wrong token", false, nil, "203.0.113.9:4000", "?token=op-3", nil, false},
		{"empty token", false, nil, "203.0.113.9:4000", "?token=", nil, false},
		{"through an unknown proxy", true, nil, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "203.0.113.9"}, false},
		{"through an unknown proxy, Forwarded", true, nil, "127.0.0.1:4000", "", map[string]string{"Forwarded": "for=203.0.113.9"}, false},
		{"through an unknown proxy, X-Real-IP", true, nil, "127.0.0.1:4000", "", map[string]string{"X-Real-IP": "203.0.113.9"}, false},
		{"through an unknown proxy, a local client claimed", true, nil, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "127.0.0.1"}, false},
		{"remote client behind a trusted proxy", true, local, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "203.0.113.9"}, false},
		{"spoofed local client behind a trusted proxy", true, local, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "127.0.0.1, 203.0.113.9"}, false},
		{"local client behind a trusted proxy", true, local, "127.0.0.1:4000", "", map[string]string{"X-Forwarded-For": "127.0.0.1"}, true},
		{"operator token through an unknown proxy", true, nil, "127.0.0.1:4000", "?token=op-1", map[string]string{"X-Forwarded-For": "203.0.113.9"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/"+tc.query, nil)
			r.RemoteAddr = tc.peer
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			if got := PageAccess([]string{"op-1", "op-2"}, tc.trusted, tc.loopback)(r); got != tc.want {
				t.Errorf("PageAccess = %v, want %v", got, tc.want)
			}
		})
	}
}
