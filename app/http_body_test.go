package app

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/config"
)

// TestReadTimeoutSparesLongResponses: once the body has been read, the
// read timeout no longer applies, so a handler working past it keeps its
// request's context and answers.
func TestReadTimeoutSparesLongResponses(t *testing.T) {
	t.Parallel()
	const d = 100 * time.Millisecond
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = httpServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(5 * d) // a long answer, well past the read timeout
		if err := r.Context().Err(); err != nil {
			http.Error(w, "context: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}), config.HTTPConfig{ReadHeaderTimeout: config.Duration(d), ReadTimeout: config.Duration(d), IdleTimeout: config.Duration(d)})
	srv.Start()
	defer srv.Close()
	res, err := http.Post(srv.URL, "text/plain", strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Errorf("%d %s", res.StatusCode, body)
	}
}
