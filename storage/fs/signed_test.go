package fs_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

// TestSignedURLPurpose: the fs URL is the key signed for purpose
// sign.StorageURL until exp; the same key and expiry signed for any other
// purpose, or under another secret, is refused.
func TestSignedURLPurpose(t *testing.T) {
	f, srv := newServed(t, nil)
	if err := f.Put(t.Context(), "a/1", strings.NewReader("x"), -1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := f.SignedURL(t.Context(), "a/1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	parsed, _ := url.Parse(u)
	exp, _ := strconv.ParseInt(parsed.Query().Get("exp"), 10, 64)
	keys, err := sign.New(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := sign.New([]byte("another secret 0123456789"))
	get := func(sig string) int {
		res, err := http.Get(srv.URL + "/media/a/1?exp=" + strconv.FormatInt(exp, 10) + "&sig=" + sig)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if s := get(keys.Sign(sign.StorageURL, time.Unix(exp, 0), "a/1")); s != http.StatusOK || parsed.Query().Get("sig") != keys.Sign(sign.StorageURL, time.Unix(exp, 0), "a/1") {
		t.Fatalf("the documented signature: %d", s)
	}
	for _, p := range sign.Purposes() {
		if p == sign.StorageURL {
			continue
		}
		if s := get(keys.Sign(p, time.Unix(exp, 0), "a/1")); s != http.StatusForbidden {
			t.Errorf("signed for %q: %d, want 403", p, s)
		}
	}
	if s := get(other.Sign(sign.StorageURL, time.Unix(exp, 0), "a/1")); s != http.StatusForbidden {
		t.Errorf("another secret: %d, want 403", s)
	}
}
