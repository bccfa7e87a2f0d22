package live

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestAllowOrigin: live answers name an allowed page origin, never "*",
// and nothing for another site's page.
func TestAllowOrigin(t *testing.T) {
	allow := func(o string) bool { return o == "https://vigia.example" }
	for _, tc := range []struct {
		name, origin, want string
	}{
		{"allowed", "https://vigia.example", "https://vigia.example"},
		{"another site", "https://attacker.example", ""},
		{"no origin", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/live/cam/index.m3u8", nil)
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			h := http.Header{}
			allowOrigin(h, r, allow)
			if got := h.Get("Access-Control-Allow-Origin"); got != tc.want {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tc.want)
			}
			if h.Get("Vary") != "Origin" {
				t.Error("no Vary: Origin")
			}
		})
	}
}

// TestWHEPNoWildcardOrigin: a WHEP answer to another site's page carries
// no Access-Control-Allow-Origin, the preflight neither.
func TestWHEPNoWildcardOrigin(t *testing.T) {
	n := newRTCNode(t, WebRTCConfig{})
	req, _ := http.NewRequest(http.MethodOptions, n.whepURL("cam", time.Now().Add(time.Hour)), nil)
	req.Header.Set("Origin", "https://attacker.example")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("preflight from another site: Access-Control-Allow-Origin %q", got)
	}
}
