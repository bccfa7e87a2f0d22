package api

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// This file holds the login throttling attacks: wrong passwords sent in
// parallel, from one address and from many, and X-Forwarded-For from a
// peer that is not a trusted proxy.

// login sends POST /api/v1/auth/token with X-Forwarded-For xff (none when
// ""); the peer is the test's loopback address.
func (e *env) login(email, pass, xff string) (resp, error) {
	body := fmt.Sprintf(`{"email": %q, "password": %q}`, email, pass)
	req, err := http.NewRequest("POST", e.http.URL+"/api/v1/auth/token", strings.NewReader(body))
	if err != nil {
		return resp{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if xff != "" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return resp{}, err
	}
	res.Body.Close()
	return resp{status: res.StatusCode, header: res.Header}, nil
}

// parallelLogins sends n logins at once (attempt i is try(i)) and counts
// the answers by status; every 429 must carry Retry-After.
func (e *env) parallelLogins(t *testing.T, n int, try func(i int) (email, pass, xff string)) map[int]int {
	t.Helper()
	var mu sync.Mutex
	count := map[int]int{}
	var errs []error
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			email, pass, xff := try(i)
			<-start
			r, err := e.login(email, pass, xff)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			if r.status == http.StatusTooManyRequests && r.header.Get("Retry-After") == "" {
				errs = append(errs, fmt.Errorf("429 without Retry-After"))
			}
			count[r.status]++
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	return count
}

// TestLoginThrottleParallel: 30 wrong passwords sent at once from one
// address: each reserves its attempt before bcrypt runs, so exactly
// api.login_attempts (5) are checked (401) and the other 25 are refused
// (429) without a password check. The passwords are hashed at the
// production cost, so the 30 requests really overlap.
func TestLoginThrottleParallel(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t, kind, func(c *Config) { c.PasswordCost = bcrypt.DefaultCost })
			e.clientWithUser("victim@example.com")
			got := e.parallelLogins(t, 30, func(int) (string, string, string) { return "victim@example.com", "wrong-password", "" })
			if got[http.StatusUnauthorized] != 5 || got[http.StatusTooManyRequests] != 25 || len(got) != 2 {
				t.Fatalf("answers %v, want 5 × 401 and 25 × 429", got)
			}
			// The right password from the same address is refused too
			// until the window passes: the address used its attempts.
			if r, err := e.login("victim@example.com", "password1", ""); err != nil || r.status != http.StatusTooManyRequests {
				t.Fatalf("right password after the burst: %v %v, want 429", r.status, err)
			}
		})
	}
}

// TestLoginThrottleAccount: one account attacked from 30 addresses at once
// (through a trusted proxy): api.login_account_attempts (20) are checked
// and the other 10 refused. Another account is not locked out, even from
// an attacking address; the attacked one is, from everywhere, until the
// window passes.
func TestLoginThrottleAccount(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t, kind, func(c *Config) {
				c.PasswordCost = bcrypt.DefaultCost
				c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
			})
			e.clientWithUser("target@example.com")
			e.clientWithUser("bystander@example.com")
			got := e.parallelLogins(t, 30, func(i int) (string, string, string) {
				return "target@example.com", "wrong-password", fmt.Sprintf("203.0.113.%d", i+1)
			})
			if got[http.StatusUnauthorized] != 20 || got[http.StatusTooManyRequests] != 10 || len(got) != 2 {
				t.Fatalf("answers %v, want 20 × 401 and 10 × 429", got)
			}
			// Everybody else still logs in, from an attacking address too.
			if r, err := e.login("bystander@example.com", "password1", "203.0.113.1"); err != nil || r.status != http.StatusOK {
				t.Fatalf("another account: %v %v, want 200", r.status, err)
			}
			if r, err := e.login("target@example.com", "password1", "198.51.100.1"); err != nil || r.status != http.StatusTooManyRequests {
				t.Fatalf("the attacked account: %v %v, want 429 until the window passes", r.status, err)
			}
			e.clock.Set(e.clock.Now().Add(15 * time.Minute))
			if r, err := e.login("target@example.com", "password1", "198.51.100.1"); err != nil || r.status != http.StatusOK {
				t.Fatalf("the attacked account after the window: %v %v, want 200", r.status, err)
			}
		})
	}
}

// TestLoginForwardedFor: X-Forwarded-For counts only from a trusted proxy.
// From any other peer it is ignored, so changing it on each request does
// not buy more attempts; from a trusted proxy each client address has its
// own attempts, and a successful login gives its attempt back.
func TestLoginForwardedFor(t *testing.T) {
	e := newEnv(t, "sqlite", nil) // no trusted proxies
	e.clientWithUser("spoof@example.com")
	for i := range 5 {
		if r, err := e.login("spoof@example.com", "wrong", fmt.Sprintf("203.0.113.%d", i+1)); err != nil || r.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %v %v", i+1, r.status, err)
		}
	}
	if r, err := e.login("spoof@example.com", "password1", "198.51.100.77"); err != nil || r.status != http.StatusTooManyRequests {
		t.Fatalf("a new X-Forwarded-For from an untrusted peer: %v %v, want 429 (the header ignored)", r.status, err)
	}

	e = newEnv(t, "sqlite", func(c *Config) { c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")} })
	e.clientWithUser("proxied@example.com")
	for i := range 5 {
		if r, err := e.login("proxied@example.com", "wrong", "203.0.113.1"); err != nil || r.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %v %v", i+1, r.status, err)
		}
	}
	if r, err := e.login("proxied@example.com", "wrong", "203.0.113.1"); err != nil || r.status != http.StatusTooManyRequests {
		t.Fatalf("6th attempt of the same client: %v %v, want 429", r.status, err)
	}
	// A spoofed address left of the one the proxy appended changes nothing.
	if r, err := e.login("proxied@example.com", "wrong", "192.0.2.50, 203.0.113.1"); err != nil || r.status != http.StatusTooManyRequests {
		t.Fatalf("spoofed left part: %v %v, want 429", r.status, err)
	}
	// Another client behind the same proxy has its own attempts, and
	// successes do not use them up.
	for i := range 8 {
		if r, err := e.login("proxied@example.com", "password1", "203.0.113.2"); err != nil || r.status != http.StatusOK {
			t.Fatalf("login %d of another client: %v %v, want 200", i+1, r.status, err)
		}
	}
}

// TestCreateIPIsClientAddr: a client's create_ip is the client address
// (ClientAddr), as login throttling sees it: the X-Forwarded-For of a
// trusted proxy, the peer otherwise.
func TestCreateIPIsClientAddr(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trusted []netip.Prefix
		want    string
	}{
		{"untrusted peer", nil, "127.0.0.1"},
		{"trusted proxy", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, "203.0.113.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "sqlite", func(c *Config) { c.TrustedProxies = tc.trusted })
			body := `{"name": "C", "document_type": 2, "document_number": "` + cnpj() + `", "phone": "11 5555-0000",
				"cep": "01000-000", "address": "Rua A", "address_number": "10", "address_nh": "Centro", "city": "São Paulo", "state": "SP",
				"users": [{"name": "U", "email": "ip-` + strings.ReplaceAll(tc.name, " ", "-") + `@example.com", "phone": "11", "user_type": 2,
				"password": "password1", "password_conf": "password1"}]}`
			req, _ := http.NewRequest("POST", e.http.URL+op("/api/v1/clients"), strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Forwarded-For", "203.0.113.5")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			var out []struct {
				CreateIP string `json:"create_ip"`
			}
			if err := json.Unmarshal(raw, &out); err != nil || res.StatusCode != 201 || len(out) != 1 {
				t.Fatalf("create client: %d %v: %s", res.StatusCode, err, raw)
			}
			if out[0].CreateIP != tc.want {
				t.Errorf("create_ip %q, want %q", out[0].CreateIP, tc.want)
			}
		})
	}
}
