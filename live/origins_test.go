package live

import "testing"

// TestOrigins: live video is readable cross-origin by the node's own
// origin and http.cors_origins; by pages on loopback hosts only on a node
// whose public URL is on one; never by another site.
func TestOrigins(t *testing.T) {
	for _, tc := range []struct {
		public string
		cors   []string
		origin string
		want   bool
	}{
		{"https://rec-1.example", nil, "https://rec-1.example", true},
		{"https://rec-1.example", nil, "https://attacker.example", false},
		{"https://rec-1.example", []string{"https://api.example", "https://other.example"}, "https://api.example", true},
		{"https://rec-1.example", []string{"https://api.example/"}, "https://api.example", true},
		{"https://rec-1.example", []string{"https://api.example"}, "http://api.example", false},
		{"https://rec-1.example", nil, "http://127.0.0.1:8080", false},
		{"http://127.0.0.1:8080", nil, "http://127.0.0.1:9000", true},
		{"http://127.0.0.1:8080", nil, "http://localhost:9000", true},
		{"http://127.0.0.1:8080", nil, "http://attacker.example", false},
		{"http://localhost:8080", nil, "http://[::1]:9000", true},
		{"http://127.0.0.1:8080", nil, "null", false},
	} {
		if got := Origins(tc.public, tc.cors)(tc.origin); got != tc.want {
			t.Errorf("public %s, cors %q: origin %s allowed %v, want %v", tc.public, tc.cors, tc.origin, got, tc.want)
		}
	}
}
