package live

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestToken checks the live token through the handler: a valid one passes
// (to a camera this node does not record: 404), a missing one is 401, any
// other refusal 403 and counted, and the response never shows the
// signature.
func TestToken(t *testing.T) {
	// Each case runs in a synctest bubble, where the clock starts at
	// 2000-01-01 00:00 UTC.
	hour := func() time.Time { return time.Now().Add(time.Hour) }
	valid := func() url.Values { return Token(testSecret, "cam", hour()) }
	with := func(key, value string) func() url.Values {
		return func() url.Values {
			v := valid()
			if value == "" {
				v.Del(key)
			} else {
				v.Set(key, value)
			}
			return v
		}
	}
	tampered := func() url.Values {
		v := valid()
		sig := []byte(v.Get("sig"))
		sig[len(sig)/2] ^= 1
		v.Set("sig", string(sig))
		return v
	}
	// The documented token: HMAC-SHA256 over "live", the camera and exp.
	documented := func() url.Values {
		v := valid()
		m := hmac.New(sha256.New, testSecret)
		m.Write([]byte("live\x00cam\x00" + v.Get("exp")))
		v.Set("sig", hex.EncodeToString(m.Sum(nil)))
		return v
	}
	otherPurpose := func() url.Values {
		v := valid()
		m := hmac.New(sha256.New, testSecret)
		m.Write([]byte("thumb\x00cam\x00" + v.Get("exp")))
		v.Set("sig", hex.EncodeToString(m.Sum(nil)))
		return v
	}
	tests := []struct {
		name  string
		query func() url.Values
		want  int
	}{
		{"valid", valid, http.StatusNotFound},
		{"documented signature", documented, http.StatusNotFound},
		{"valid until this second", func() url.Values { return Token(testSecret, "cam", time.Now()) }, http.StatusNotFound},
		{"no token", func() url.Values { return url.Values{} }, http.StatusUnauthorized},
		{"no signature", with("sig", ""), http.StatusUnauthorized},
		{"no expiry", with("exp", ""), http.StatusUnauthorized},
		{"expired", func() url.Values { return Token(testSecret, "cam", time.Now().Add(-time.Second)) }, http.StatusForbidden},
		{"another camera", func() url.Values { return Token(testSecret, "other", hour()) }, http.StatusForbidden},
		{"another secret", func() url.Values { return Token([]byte("another secret"), "cam", hour()) }, http.StatusForbidden},
		{"another purpose", otherPurpose, http.StatusForbidden},
		{"tampered signature", tampered, http.StatusForbidden},
		{"extended expiry", with("exp", "946771200"), http.StatusForbidden}, // a day later
		{"expiry not a number", with("exp", "tomorrow"), http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, reg := newTestServer(t, Config{})
				q := tc.query()
				res := get(s.Handler(), "/live/cam/index.m3u8?"+q.Encode())
				if res.Code != tc.want {
					t.Errorf("status %d %q, want %d", res.Code, strings.TrimSpace(res.Body.String()), tc.want)
				}
				if sig := q.Get("sig"); sig != "" && strings.Contains(res.Body.String(), sig) {
					t.Errorf("the response shows the signature: %q", res.Body)
				}
				refused := 0.0
				if tc.want != http.StatusNotFound {
					refused = 1
				}
				if got := counter(t, reg, "vigia_live_requests_total", "result", "refused"); got != refused {
					t.Errorf("refused requests counted %v, want %v", got, refused)
				}
			})
		})
	}
}

// TestTokenExpiresDuringPlayback checks that a token opens the stream until
// its expiry and not after, whatever the calendar day.
func TestTokenExpiresDuringPlayback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newTestServer(t, Config{})
		h := s.Handler()
		// Two hours that cross midnight (synctest starts at midnight UTC).
		time.Sleep(23 * time.Hour)
		target := URL("", testSecret, "cam", time.Now().Add(2*time.Hour))
		time.Sleep(90 * time.Minute)
		if res := get(h, target); res.Code != http.StatusNotFound {
			t.Errorf("before the expiry: %d, want 404 (token accepted)", res.Code)
		}
		time.Sleep(31 * time.Minute)
		if res := get(h, target); res.Code != http.StatusForbidden {
			t.Errorf("after the expiry: %d, want 403", res.Code)
		}
	})
}
