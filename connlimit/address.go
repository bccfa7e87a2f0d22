package connlimit

import (
	"net"
	"net/netip"
)

// Key returns the source a connection from addr is counted under: the IP
// address for IPv4 (and IPv4-mapped IPv6), the /64 prefix for IPv6, the
// address text for anything else.
func Key(addr net.Addr) string {
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return addr.String()
	}
	ip := ap.Addr().Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.Prefix(64)
	if err != nil {
		return ip.String()
	}
	return p.String()
}
