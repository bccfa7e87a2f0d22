package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestReadyzDetails: /readyz answers its status to anyone, and its
// details (storage, NATS address) only with an operator token, or on a
// node with Mode.LocalAccess (serve) to a client on this machine naming it
// in Host.
func TestReadyzDetails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		local   bool
		query   string
		host    string
		details bool
	}{
		{"no token", false, "", "127.0.0.1", false},
		{"operator token", false, "?token=" + testOperator, "127.0.0.1", true},
		{"wrong token", false, "?token=nope", "127.0.0.1", false},
		{"serve, local", true, "", "localhost", true},
		{"serve, DNS rebinding", true, "", "attacker.example", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := apiApp(t, Mode{Name: "test", LocalAccess: tc.local}, nil)
			req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s/readyz%s", a.listener.Addr(), tc.query), nil)
			req.Host = tc.host
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body map[string]any
			if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != http.StatusOK || body["ready"] != true {
				t.Errorf("readyz: %d %v", res.StatusCode, body)
			}
			nats, _ := body["nats"].(string)
			if got := strings.Contains(nats, "nats"); got != tc.details {
				t.Errorf("details shown %v, want %v: %v", got, tc.details, body)
			}
		})
	}
}
