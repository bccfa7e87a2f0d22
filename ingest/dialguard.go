package ingest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

// AddressAllowed reports whether a camera may be dialled at ip: loopback,
// link-local, private, unspecified and multicast addresses are refused
// unless private networks are allowed.
func AddressAllowed(ip netip.Addr, allowPrivate bool) bool {
	if allowPrivate {
		return true
	}
	ip = ip.Unmap()
	return !(ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsPrivate() || ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		isSharedOrReserved(ip))
}

// isSharedOrReserved covers carrier-grade NAT 100.64/10 and the unique
// local / site-local ranges not flagged by netip.
var sharedRanges = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("fec0::/10"),
}

func isSharedOrReserved(ip netip.Addr) bool {
	for _, p := range sharedRanges {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// GuardedDialer returns a DialContext that resolves the host itself and
// refuses addresses AddressAllowed rejects, so a camera URL (or a redirect)
// cannot reach internal services.
func GuardedDialer(allowPrivate bool) func(ctx context.Context, network, address string) (net.Conn, error) {
	return GuardedDialerFunc(func(ip netip.Addr) bool { return AddressAllowed(ip, allowPrivate) })
}

// GuardedDialerFunc is GuardedDialer with the address policy given as a
// function: it resolves the host itself and dials only addresses allowed
// accepts.
func GuardedDialerFunc(allowed func(netip.Addr) bool) func(ctx context.Context, network, address string) (net.Conn, error) {
	d := &net.Dialer{}
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		var lastErr error
		for _, ip := range ips {
			ip = ip.Unmap()
			if !allowed(ip) {
				lastErr = Permanent(ReasonForbidden, fmt.Errorf("%s resolves to %s", host, ip))
				continue
			}
			c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return c, nil
			}
			lastErr = err
		}
		if lastErr == nil {
			lastErr = fmt.Errorf("no address for %s", host)
		}
		return nil, lastErr
	}
}
