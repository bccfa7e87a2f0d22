package api

import (
	"crypto/subtle"
	"net/http"
	"net/netip"
)

// PageAccess returns the check of a node's recordings page
// (player.NodePage): a request may see it with one of the operator tokens
// in its query (`token`), or, when loopback is set (a `serve` node, the
// one-machine development mode), without one from a client on this
// machine (LocalClient). The address the node listens on plays no part.
func PageAccess(tokens []string, trusted []netip.Prefix, loopback bool) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if loopback && LocalClient(r, trusted) {
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
// client address (ClientAddr through trusted, http.trusted_proxies) is a
// loopback one, and no proxy outside trusted forwarded it (a reverse proxy
// on this machine would make every client look local).
func LocalClient(r *http.Request, trusted []netip.Prefix) bool {
	return ClientAddr(r, trusted).IsLoopback() && !ForwardedUntrusted(r, trusted)
}
