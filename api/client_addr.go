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
// then X-Forwarded-For is read from right to left, each trusted address
// skipped, and the first address that is not trusted is the client (the
// leftmost one when all are). Addresses left of it were written by the
// client and are never believed. The zero Addr means the peer address
// cannot be read.
func ClientAddr(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := peerAddr(r)
	if !peer.IsValid() || !inPrefixes(peer, trusted) {
		return peer
	}
	hops := forwardedFor(r)
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			return client // a garbled hop: the last address believed
		}
		client = a
		if !inPrefixes(a, trusted) {
			return a
		}
	}
	return client
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

// forwardedFor returns the hops of every X-Forwarded-For header, in order.
func forwardedFor(r *http.Request) []string {
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for _, h := range strings.Split(v, ",") {
			hops = append(hops, strings.TrimSpace(h))
		}
	}
	return hops
}

// parseHop reads one X-Forwarded-For entry: an address, with or without a
// port.
func parseHop(h string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(h); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
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
