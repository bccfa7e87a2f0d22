package camevents

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/onvif"
)

// MaxProbeTargets bounds the addresses one discovery probes unicast.
const MaxProbeTargets = 4096

// DefaultProbeWait is how long a discovery waits for answers.
const DefaultProbeWait = 3 * time.Second

// probeGap paces unicast probes: 4096 addresses take about 8 s.
const probeGap = 2 * time.Millisecond

// ErrForbidden is returned when a discovery would probe only addresses the
// dial guard forbids (camera.AddressAllowed) and private networks are not
// allowed.
var ErrForbidden = errors.New("discovery: the addresses to probe are forbidden by the dial guard (ingest.allow_private_networks)")

// DiscoverOptions configure Discover.
type DiscoverOptions struct {
	// Ranges are the addresses probed unicast: IPv4 or IPv6 addresses and
	// prefixes (192.168.1.0/24). With none, the probe goes to the
	// WS-Discovery multicast group (onvif.DiscoveryGroup).
	Ranges []string
	// Port is the UDP port probed unicast. It defaults to
	// onvif.DiscoveryPort.
	Port int
	// Wait is how long answers are awaited. It defaults to
	// DefaultProbeWait.
	Wait time.Duration
	// AllowPrivate lets the probe reach what the dial guard forbids
	// (loopback, private, link-local and multicast addresses: the
	// multicast group itself). Without it those addresses are skipped,
	// answers from them dropped, and a multicast probe refused.
	AllowPrivate bool
}

// Discover probes for ONVIF cameras (WS-Discovery) and returns those that
// answered, in the order they did.
func Discover(ctx context.Context, o DiscoverOptions) ([]onvif.ProbeMatch, error) {
	if o.Port <= 0 {
		o.Port = onvif.DiscoveryPort
	}
	if o.Wait <= 0 {
		o.Wait = DefaultProbeWait
	}
	allowed := func(ip netip.Addr) bool { return camera.AddressAllowed(ip, o.AllowPrivate) }
	var targets []netip.AddrPort
	if len(o.Ranges) == 0 {
		if !allowed(onvif.DiscoveryGroup.Addr()) {
			return nil, ErrForbidden
		}
		targets = []netip.AddrPort{onvif.DiscoveryGroup}
	} else {
		addrs, err := ProbeTargets(o.Ranges, allowed)
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			targets = append(targets, netip.AddrPortFrom(a, uint16(o.Port)))
		}
	}
	network := "udp4"
	for _, t := range targets {
		if !t.Addr().Is4() {
			network = "udp" // both families
			break
		}
	}
	conn, err := net.ListenUDP(network, nil)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, o.Wait+time.Duration(len(targets))*probeGap)
	defer cancel()
	return onvif.Probe(ctx, conn, targets, probeGap, allowed)
}

// ProbeTargets expands ranges (addresses and prefixes) into the addresses
// to probe, in order and without duplicates, skipping those allowed
// refuses (and, in an IPv4 prefix of 30 bits or fewer, its network and broadcast
// addresses). It fails on a range that does not parse, on more than
// MaxProbeTargets addresses, and with ErrForbidden when nothing is left.
func ProbeTargets(ranges []string, allowed func(netip.Addr) bool) ([]netip.Addr, error) {
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	add := func(a netip.Addr) error {
		if seen[a] || !allowed(a) {
			return nil
		}
		if len(out) == MaxProbeTargets {
			return fmt.Errorf("discovery: more than %d addresses to probe", MaxProbeTargets)
		}
		seen[a] = true
		out = append(out, a)
		return nil
	}
	for _, r := range ranges {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		if !strings.Contains(r, "/") {
			a, err := netip.ParseAddr(r)
			if err != nil {
				return nil, fmt.Errorf("discovery: range %q: %w", r, err)
			}
			if err := add(a.Unmap()); err != nil {
				return nil, err
			}
			continue
		}
		p, err := netip.ParsePrefix(r)
		if err != nil {
			return nil, fmt.Errorf("discovery: range %q: %w", r, err)
		}
		p = p.Masked()
		if host := p.Addr().BitLen() - p.Bits(); host > 16 {
			return nil, fmt.Errorf("discovery: range %q: more than %d addresses to probe", r, MaxProbeTargets)
		}
		for a := p.Addr(); p.Contains(a); a = a.Next() {
			if p.Addr().Is4() && p.Bits() <= 30 && (a == p.Addr() || !p.Contains(a.Next())) {
				continue // network and broadcast addresses
			}
			if err := add(a); err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 {
		return nil, ErrForbidden
	}
	return out, nil
}
