package ingest

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/vigia/vigia/camera"
)

// GuardedDialer returns a DialContext that resolves the host itself and
// refuses addresses camera.AddressAllowed rejects, so a camera URL (or a
// redirect) cannot reach internal services.
func GuardedDialer(allowPrivate bool) func(ctx context.Context, network, address string) (net.Conn, error) {
	return GuardedDialerFunc(func(ip netip.Addr) bool { return camera.AddressAllowed(ip, allowPrivate) })
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
