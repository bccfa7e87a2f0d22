package app

import (
	"testing"

	"github.com/vigia/vigia/config"
)

// TestAllowedOrigin: live video is readable cross-origin by the node's own
// origin and http.cors_origins; by pages on loopback hosts only on a node
// whose public URL is on one; never by another site.
func TestAllowedOrigin(t *testing.T) {
	for _, tc := range []struct {
		public, cors, origin string
		want                 bool
	}{
		{"https://rec-1.example", "", "https://rec-1.example", true},
		{"https://rec-1.example", "", "https://attacker.example", false},
		{"https://rec-1.example", "https://api.example, https://other.example", "https://api.example", true},
		{"https://rec-1.example", "https://api.example", "http://api.example", false},
		{"https://rec-1.example", "", "http://127.0.0.1:8080", false},
		{"http://127.0.0.1:8080", "", "http://127.0.0.1:9000", true},
		{"http://127.0.0.1:8080", "", "http://localhost:9000", true},
		{"http://127.0.0.1:8080", "", "http://attacker.example", false},
		{"http://localhost:8080", "", "http://[::1]:9000", true},
		{"http://127.0.0.1:8080", "", "null", false},
	} {
		a := &App{cfg: &config.Config{HTTP: config.HTTPConfig{PublicURL: tc.public, CORSOrigins: tc.cors}}}
		if got := a.allowedOrigin(tc.origin); got != tc.want {
			t.Errorf("public %s, cors %q: origin %s allowed %v, want %v", tc.public, tc.cors, tc.origin, got, tc.want)
		}
	}
}
