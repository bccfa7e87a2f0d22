package api

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// PageAccess returns the check of a node's recordings page
// (player.NodePage): a request may see it with one of the operator tokens
// in its query (`token`), or, when loopback is set (a `serve` node, the
// one-machine development mode), without one from a client on this
// machine (LocalClient) that named this machine in its Host header
// (LocalHost: localhost, a loopback address or one of hosts, the host of
// http.public_url). A page a browser loaded from another name (DNS
// rebinding: attacker.example resolving to 127.0.0.1) needs the token.
// The address the node listens on plays no part.
func PageAccess(tokens []string, trusted []netip.Prefix, loopback bool, hosts ...string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if loopback && LocalClient(r, trusted) && LocalHost(r, hosts...) {
			return true
		}
		t := r.URL.Query().Get("token")
		if t == "" {
			return false
		}
		for _, ok := range tokens {
			if subtle.ConstantTimeCompare([]byte(t), []byte(ok)) == 1 {
				return true
			}
		}
		return false
	}
}

// LocalClient reports whether r comes from a client on this machine: its
// client address (ClientAddrKnown through trusted, http.trusted_proxies)
// is known and a loopback one, and no proxy outside trusted forwarded it
// (a reverse proxy on this machine would make every client look local).
// A trusted proxy that names no readable client is never local.
func LocalClient(r *http.Request, trusted []netip.Prefix) bool {
	a, known := ClientAddrKnown(r, trusted)
	return known && a.IsLoopback() && !ForwardedUntrusted(r, trusted)
}

// LocalHost reports whether r's Host header (its port aside) is
// localhost, a loopback address, or one of hosts (case aside).
func LocalHost(r *http.Request, hosts ...string) bool {
	h := r.Host
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	} else {
		h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil && a.Unmap().IsLoopback() {
		return true
	}
	for _, p := range hosts {
		if p != "" && strings.EqualFold(h, p) {
			return true
		}
	}
	return false
}

// MetricsAccess serves next to the requests allowed reads (the operator's:
// PageAccess) and to those bearing token (Authorization: Bearer, or the
// token query parameter), when token is not empty; others get 401.
func MetricsAccess(allowed func(*http.Request) bool, token string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if allowed(r) || token != "" && bearerOrQuery(r, token) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
		http.Error(w, "a metrics token (http.metrics_token) or an operator token is required", http.StatusUnauthorized)
	})
}

// bearerOrQuery reports whether r carries token as a bearer token or as
// its token query parameter (constant time).
func bearerOrQuery(r *http.Request, token string) bool {
	given := r.URL.Query().Get("token")
	if h := r.Header.Get("Authorization"); len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		given = strings.TrimSpace(h[7:])
	}
	return given != "" && subtle.ConstantTimeCompare([]byte(given), []byte(token)) == 1
}
