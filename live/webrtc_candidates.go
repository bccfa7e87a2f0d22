package live

import (
	"net"
	"net/netip"
	"slices"

	"github.com/pion/webrtc/v4"

	"github.com/vigia/vigia/camera"
)

// candidateRule decides which addresses the node lists in its answers and
// which of a viewer's candidates it checks (sends STUN to). A viewer's
// candidate is checked when its address is public (camera.AddressAllowed),
// or is in the network of an interface the node gathers on (a viewer on
// the node's LAN; loopback when "lo" is among WebRTCConfig.Interfaces), or
// is private and AllowPrivateCandidates is set; never when unspecified or
// multicast. Without WebRTCConfig.Interfaces the node lists its public
// addresses only, or, on a host without one, its private ones; link-local,
// unspecified and multicast addresses never.
type candidateRule struct {
	allowPrivate bool
	local        []netip.Prefix // networks of the interfaces gathered on
	hasPublic    bool           // one of them has a public address
	configured   bool           // WebRTCConfig.Interfaces was set
}

// newCandidateRule reads the host's interfaces for cfg.
func newCandidateRule(cfg WebRTCConfig) candidateRule {
	r := candidateRule{allowPrivate: cfg.AllowPrivateCandidates, configured: len(cfg.Interfaces) > 0}
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || !gathers(cfg, ifc) {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok {
				continue
			}
			ip = ip.Unmap()
			ones, _ := ipn.Mask.Size()
			if p, err := ip.Prefix(ones); err == nil && !ip.IsLinkLocalUnicast() {
				r.local = append(r.local, p)
			}
			if camera.AddressAllowed(ip, false) {
				r.hasPublic = true
			}
		}
	}
	return r
}

// gathers reports whether the node gathers candidates on ifc under cfg
// (the interface filter of settings).
func gathers(cfg WebRTCConfig, ifc net.Interface) bool {
	if len(cfg.Interfaces) > 0 {
		return slices.Contains(cfg.Interfaces, ifc.Name)
	}
	return ifc.Flags&net.FlagLoopback == 0
}

// remote reports whether the node may check a viewer's candidate at ip.
func (r candidateRule) remote(nip net.IP) bool {
	ip, ok := netip.AddrFromSlice(nip)
	if !ok {
		return false
	}
	ip = ip.Unmap()
	switch {
	case ip.IsUnspecified() || ip.IsMulticast():
		return false
	case camera.AddressAllowed(ip, false):
		return true
	case slices.ContainsFunc(r.local, func(p netip.Prefix) bool { return p.Contains(ip) }):
		return true
	}
	return r.allowPrivate && !ip.IsLoopback() && !ip.IsLinkLocalUnicast()
}

// own reports whether the node lists its address ip in its answers.
func (r candidateRule) own(nip net.IP) bool {
	ip, ok := netip.AddrFromSlice(nip)
	if !ok {
		return false
	}
	ip = ip.Unmap()
	switch {
	case ip.IsUnspecified() || ip.IsMulticast() || ip.IsLinkLocalUnicast():
		return false
	case r.configured || !r.hasPublic:
		return true
	}
	return camera.AddressAllowed(ip, false)
}

// apply sets the rule's filters on se.
func (r candidateRule) apply(se *webrtc.SettingEngine) {
	se.SetIPFilter(r.own)
	se.SetRemoteIPFilter(r.remote)
}
