package api

import (
	"net"
	"net/http"
	"net/netip"
	"strings"

	"go.uber.org/zap"
)

// forwardHeaders are the headers a reverse proxy sets to say whom it
// forwards for.
var forwardHeaders = []string{"X-Forwarded-For", "Forwarded", "X-Real-Ip"}

// ClientAddr returns the address of the client that sent r. It is the
// peer's address, unless the peer is in trusted (http.trusted_proxies):
// then the hops its forwarding header names (Forwarded's for=, else
// X-Forwarded-For, else X-Real-IP; the first of them present) are read
// from right to left, each trusted address skipped, and the first address
// that is not trusted is the client (the leftmost one when all are).
// Addresses left of it were written by the client and are never
// believed. When the trusted peer names no readable client (no header, an
// unreadable hop such as "unknown", an obfuscated identifier or garbage)
// it is the last address believed, the proxy's at worst: what a throttle
// counts the request under, never a client's own (ClientAddrKnown). The
// zero Addr means the peer address cannot be read.
func ClientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	a, _ := ClientAddrKnown(r, trusted)
	return a
}

// ClientAddrKnown is ClientAddr, and whether the address is the client's:
// false when a trusted proxy named no readable client, so that the
// address is a proxy's (which a loopback proxy's would make look local).
func ClientAddrKnown(r *http.Request, trusted []netip.Prefix) (netip.Addr, bool) {
	peer := peerAddr(r)
	if !peer.IsValid() || !inPrefixes(peer, trusted) {
		return peer, peer.IsValid()
	}
	hops := forwardedHops(r)
	if len(hops) == 0 {
		return peer, false
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			return client, false // an unreadable hop: the last address believed
		}
		client = a
		if !inPrefixes(a, trusted) {
			return a, true
		}
	}
	return client, true
}

// ForwardedUntrusted reports whether r carries a forwarding header
// (X-Forwarded-For, Forwarded, X-Real-IP) while its peer is not in
// trusted: it came through a reverse proxy that ClientAddr does not
// believe, so its client address is the proxy's.
func ForwardedUntrusted(r *http.Request, trusted []netip.Prefix) bool {
	for _, h := range forwardHeaders {
		if r.Header.Get(h) != "" {
			return !inPrefixes(peerAddr(r), trusted)
		}
	}
	return false
}

// clientAddr is ClientAddr with the server's trusted proxies; a request
// forwarded by an untrusted peer is logged once, since it usually means
// http.trusted_proxies is missing behind a proxy.
func (s *Server) clientAddr(r *http.Request) netip.Addr {
	a := ClientAddr(r, s.cfg.TrustedProxies)
	if ForwardedUntrusted(r, s.cfg.TrustedProxies) {
		s.untrustedXFF.Do(func() {
			s.log.Warn("forwarding headers from a peer that is not in http.trusted_proxies ignored; "+
				"behind a reverse proxy, list it there, or every client shares its address",
				zap.String("peer", peerAddr(r).String()))
		})
	}
	return a
}

func peerAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

// forwardedHops returns the hops a proxy named, in order: the for=
// values of every Forwarded header when there is one (RFC 7239), else
// those of every X-Forwarded-For header, else X-Real-IP.
func forwardedHops(r *http.Request) []string {
	if vs := r.Header.Values("Forwarded"); len(vs) > 0 {
		var hops []string
		for _, v := range vs {
			for _, el := range splitQuoted(v, ',') {
				hops = append(hops, forwardedFor7239(el))
			}
		}
		return hops
	}
	if vs := r.Header.Values("X-Forwarded-For"); len(vs) > 0 {
		var hops []string
		for _, v := range vs {
			for _, h := range strings.Split(v, ",") {
				hops = append(hops, strings.TrimSpace(h))
			}
		}
		return hops
	}
	if v := r.Header.Get("X-Real-Ip"); v != "" {
		return []string{strings.TrimSpace(v)}
	}
	return nil
}

// forwardedFor7239 returns the for= value of one Forwarded element
// (for=192.0.2.60;proto=http;by=203.0.113.43), unquoted; "" when it has
// none.
func forwardedFor7239(el string) string {
	for _, pair := range splitQuoted(el, ';') {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "for") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = strings.ReplaceAll(v[1:len(v)-1], `\`, "")
		}
		return v
	}
	return ""
}

// splitQuoted splits s at sep outside double quotes.
func splitQuoted(s string, sep byte) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && quoted:
			i++
		case s[i] == '"':
			quoted = !quoted
		case s[i] == sep && !quoted:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// parseHop reads one hop: an address, with or without a port, IPv6 with
// or without brackets. "unknown", obfuscated identifiers ("_hidden") and
// anything else are unreadable.
func parseHop(h string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(h); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if len(h) > 2 && h[0] == '[' && h[len(h)-1] == ']' {
		if a, err := netip.ParseAddr(h[1 : len(h)-1]); err == nil && a.Is6() {
			return a.Unmap().WithZone(""), true
		}
	}
	return netip.Addr{}, false
}

func inPrefixes(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
