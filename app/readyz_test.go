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
// `serve` node to a client on this machine naming it in Host.
func TestReadyzDetails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mode    string
		query   string
		host    string
		details bool
	}{
		{"no token", "test", "", "127.0.0.1", false},
		{"operator token", "test", "?token=" + testOperator, "127.0.0.1", true},
		{"wrong token", "test", "?token=nope", "127.0.0.1", false},
		{"serve, local", "serve", "", "localhost", true},
		{"serve, DNS rebinding", "serve", "", "attacker.example", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := apiApp(t, Mode{Name: tc.mode}, nil)
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
