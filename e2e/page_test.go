package e2e

import (
	"net/http"
	"testing"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/testenv"
)

// TestNodePageNeedsOperatorToken: outside the loopback `serve` mode, the
// node's recordings page and its listing need the operator token.
func TestNodePageNeedsOperatorToken(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	c := s3Config(t, m)
	c.OperatorToken = "operator-token-for-the-page-test-0123"
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	for _, tc := range []struct {
		path string
		want int
	}{
		{"/", http.StatusUnauthorized},
		{"/?token=wrong", http.StatusUnauthorized},
		{"/recordings/cam", http.StatusUnauthorized},
		{"/?token=" + c.OperatorToken, http.StatusOK},
		{"/recordings/cam?token=" + c.OperatorToken, http.StatusOK},
	} {
		res, err := http.Get(a.URL() + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("GET %s: %d, want %d", tc.path, res.StatusCode, tc.want)
		}
	}
}

// TestServePageByClientAddress: a `serve` node shows its recordings page
// without a token to a client on this machine only, decided by the
// client's address, never by the address the node listens on: a request
// forwarded by a proxy that is not in http.trusted_proxies (a reverse
// proxy on this machine, whose own address is loopback) needs the
// operator token, and so does a remote client behind a trusted proxy.
func TestServePageByClientAddress(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	for _, tc := range []struct {
		name    string
		trusted string
		header  map[string]string
		want    int
	}{
		{"local client", "", nil, http.StatusOK},
		{"through an unknown proxy", "", map[string]string{"X-Forwarded-For": "203.0.113.9"}, http.StatusUnauthorized},
		{"through an unknown proxy, Forwarded", "", map[string]string{"Forwarded": "for=203.0.113.9"}, http.StatusUnauthorized},
		{"through an unknown proxy, X-Real-IP", "", map[string]string{"X-Real-IP": "203.0.113.9"}, http.StatusUnauthorized},
		{"through an unknown proxy, a local client claimed", "", map[string]string{"X-Forwarded-For": "127.0.0.1"}, http.StatusUnauthorized},
		{"remote client behind a trusted proxy", "127.0.0.1", map[string]string{"X-Forwarded-For": "203.0.113.9"}, http.StatusUnauthorized},
		{"spoofed local client behind a trusted proxy", "127.0.0.1", map[string]string{"X-Forwarded-For": "127.0.0.1, 203.0.113.9"}, http.StatusUnauthorized},
		{"local client behind a trusted proxy", "127.0.0.1", map[string]string{"X-Forwarded-For": "127.0.0.1"}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := s3Config(t, m)
			c.OperatorToken = "operator-token-for-the-page-test-0123"
			c.HTTP.TrustedProxies = tc.trusted
			log, _ := testLogger(t)
			a := startMode(t, c, app.Mode{Name: "serve", Recorder: true, LocalAccess: true}, log)
			for _, path := range []string{"/", "/recordings/cam"} {
				req, _ := http.NewRequest("GET", a.URL()+path, nil)
				for k, v := range tc.header {
					req.Header.Set(k, v)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != tc.want {
					t.Errorf("GET %s: %d, want %d", path, res.StatusCode, tc.want)
				}
				// The operator token opens it whatever the address.
				res, err = http.Get(a.URL() + path + "?token=" + c.OperatorToken)
				if err != nil {
					t.Fatal(err)
				}
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					t.Errorf("GET %s with the operator token: %d", path, res.StatusCode)
				}
			}
		})
	}
}
