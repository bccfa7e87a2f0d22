package storagetest

import (
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
)

// expiryDeadline bounds the wait for a short-lived signed URL to be refused.
const expiryDeadline = 30 * time.Second

// fetch GETs u with an optional Range header and returns status and body.
func fetch(t *testing.T, u, rng string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), http.MethodGet, u, nil)
	if err != nil {
		t.Fatalf("request %s: %v", u, err)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET signed url: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read signed url body: %v", err)
	}
	return resp.StatusCode, body
}

func testSignedURL(t *testing.T, s storage.Store) {
	key := "snap/cam-1/1714979000123.jpg"
	data := []byte("\xff\xd8 jpeg bytes \xff\xd9")
	put(t, s, key, data, storage.PutOptions{ContentType: "image/jpeg"})
	u, err := s.SignedURL(ctx(t), key, time.Hour)
	if err != nil {
		t.Fatalf("SignedURL: %v", err)
	}
	tests := []struct {
		name       string
		url        string
		rng        string
		wantStatus int
		wantBody   string
	}{
		{name: "whole", url: u, wantStatus: http.StatusOK, wantBody: string(data)},
		{name: "range", url: u, rng: "bytes=3-6", wantStatus: http.StatusPartialContent, wantBody: string(data[3:7])},
		{name: "tampered", url: tamper(t, u), wantStatus: http.StatusForbidden},
		{name: "unsigned", url: stripQuery(t, u), wantStatus: http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := fetch(t, tc.url, tc.rng)
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d (body %q)", status, tc.wantStatus, body)
			}
			if tc.wantBody != "" && string(body) != tc.wantBody {
				t.Fatalf("body %q, want %q", body, tc.wantBody)
			}
		})
	}
	if _, err := s.SignedURL(ctx(t), key, 0); err == nil {
		t.Fatal("SignedURL with zero expiry succeeded")
	}
}

func testSignedURLExpired(t *testing.T, s storage.Store) {
	key := "snap/cam-1/1.jpg"
	put(t, s, key, []byte("jpeg"), storage.PutOptions{})
	u, err := s.SignedURL(ctx(t), key, time.Second)
	if err != nil {
		t.Fatalf("SignedURL: %v", err)
	}
	deadline := time.Now().Add(expiryDeadline)
	for {
		status, _ := fetch(t, u, "")
		if status == http.StatusForbidden {
			return
		}
		if status != http.StatusOK {
			t.Fatalf("status %d while waiting for expiry", status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("signed url with 1s expiry still served after %v", expiryDeadline)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tamper changes the last character of the URL's signature-bearing query.
func tamper(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("parse signed url: %v", err)
	}
	q := p.Query()
	for _, name := range []string{"sig", "X-Amz-Signature"} {
		if v := q.Get(name); v != "" {
			last := v[len(v)-1]
			repl := byte('0')
			if last == '0' {
				repl = '1'
			}
			q.Set(name, v[:len(v)-1]+string(repl))
			p.RawQuery = q.Encode()
			return p.String()
		}
	}
	// Unknown scheme: point the signature at another key instead.
	p.Path += "x"
	return p.String()
}

// stripQuery drops the query of u.
func stripQuery(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatalf("parse signed url: %v", err)
	}
	p.RawQuery = ""
	return p.String()
}
