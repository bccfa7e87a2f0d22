package e2e

import (
	"net/http"
	"testing"

	"github.com/vigia/vigia/testenv"
)

// TestNodePageNeedsOperatorToken: outside the loopback `serve` mode, the
// node's recordings page and its listing need the operator token.
func TestNodePageNeedsOperatorToken(t *testing.T) {
	t.Parallel()
	m := testenv.MinIO(t)
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
