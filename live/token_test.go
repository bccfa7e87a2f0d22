package live

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vigia/vigia/sign"
)

// TestToken checks the live token through the handler: a valid one passes
// (to a camera this node does not record: 404), a missing one is 401, any
// other refusal 403 and counted, and the response never shows the
// signature.
func TestToken(t *testing.T) {
	// Each case runs in a synctest bubble, where the clock starts at
	// 2000-01-01 00:00 UTC.
	hour := func() time.Time { return time.Now().Add(time.Hour) }
	valid := func() url.Values { return Token(testKeys, "cam", hour()) }
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
	// The documented token (docs/security.md): the first 128 bits of
	// HMAC-SHA256 under the "live url" key over the varint expiry and the
	// length-prefixed camera id.
	documented := func() url.Values {
		v := valid()
		exp, _ := strconv.ParseInt(v.Get("exp"), 10, 64)
		m := hmac.New(sha256.New, sign.Derive(testSecret, sign.LiveURL))
		m.Write(binary.AppendVarint(nil, exp))
		m.Write(binary.AppendUvarint(nil, uint64(len("cam"))))
		m.Write([]byte("cam"))
		v.Set("sig", hex.EncodeToString(m.Sum(nil)[:16]))
		return v
	}
	otherPurpose := func() url.Values {
		v := valid()
		exp, _ := strconv.ParseInt(v.Get("exp"), 10, 64)
		v.Set("sig", testKeys.Sign(sign.StorageURL, time.Unix(exp, 0), "cam"))
		return v
	}
	tests := []struct {
		name  string
		query func() url.Values
		want  int
	}{
		{"valid", valid, http.StatusNotFound},
		{"documented signature", documented, http.StatusNotFound},
		{"valid until this second", func() url.Values { return Token(testKeys, "cam", time.Now()) }, http.StatusNotFound},
		{"no token", func() url.Values { return url.Values{} }, http.StatusUnauthorized},
		{"no signature", with("sig", ""), http.StatusUnauthorized},
		{"no expiry", with("exp", ""), http.StatusUnauthorized},
		{"expired", func() url.Values { return Token(testKeys, "cam", time.Now().Add(-time.Second)) }, http.StatusForbidden},
		{"another camera", func() url.Values { return Token(testKeys, "other", hour()) }, http.StatusForbidden},
		{"another secret", func() url.Values { return Token(mustKeys([]byte("another secret 0123456789")), "cam", hour()) }, http.StatusForbidden},
		{"another purpose", otherPurpose, http.StatusForbidden},
		{"tampered signature", tampered, http.StatusForbidden},
		{"extended expiry", with("exp", "946771200"), http.StatusForbidden}, // a day later
		{"expiry not a number", with("exp", "tomorrow"), http.StatusForbidden},
	}
	// The camera and expiry signed for every other purpose of the key
	// scheme.
	for _, p := range sign.Purposes() {
		if p == sign.LiveURL {
			continue
		}
		tests = append(tests, struct {
			name  string
			query func() url.Values
			want  int
		}{"signed for " + string(p), func() url.Values {
			v := valid()
			exp, _ := strconv.ParseInt(v.Get("exp"), 10, 64)
			v.Set("sig", testKeys.Sign(p, time.Unix(exp, 0), "cam"))
			return v
		}, http.StatusForbidden})
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
		target := URL("", testKeys, "cam", time.Now().Add(2*time.Hour))
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
