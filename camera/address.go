package camera

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/vigia/vigia/sign"
)

// Address rules: which addresses a camera may be dialled at, and the key a
// camera that pushes its stream presents. The API checks them when a
// camera is written; the sources (package ingest) when they connect.

// AddressAllowed reports whether a camera may be dialled at ip: loopback,
// link-local, private, carrier-grade NAT, reserved, unspecified and
// multicast addresses are refused unless private networks are allowed.
func AddressAllowed(ip netip.Addr, allowPrivate bool) bool {
	if allowPrivate {
		return true
	}
	ip = ip.Unmap()
	return !(ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsPrivate() || ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() ||
		isSharedOrReserved(ip))
}

// sharedRanges are carrier-grade NAT 100.64/10 and the reserved and
// site-local ranges netip does not flag.
var sharedRanges = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("fec0::/10"),
}

// isSharedOrReserved reports whether ip is in sharedRanges.
func isSharedOrReserved(ip netip.Addr) bool {
	for _, p := range sharedRanges {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// PushKey returns the stream key of the camera id, the key= of the URL it
// pushes to: the signature of the id for purpose sign.RTMPKey, without
// expiry, under k's current secret (32 hex digits). Only holders of the
// cluster secret can compute it, so one camera's key tells nothing about
// another's.
func PushKey(k *sign.Keys, id string) string {
	return PushKeyGen(k, id, 0)
}

// PushKeyGen returns the stream key of the camera id at key generation
// gen (Config.PushKeyGen): PushKey's for 0, the signature of the id and
// the generation after each rotation, so rotating one camera's key
// changes no other's.
func PushKeyGen(k *sign.Keys, id string, gen int) string {
	if gen == 0 {
		return k.Sign(sign.RTMPKey, time.Time{}, id)
	}
	return k.Sign(sign.RTMPKey, time.Time{}, id, "gen", strconv.Itoa(gen))
}

// CheckPushKey reports whether key is the stream key of the camera id
// under k's current secret or, until the end of a rotation's overlap (now
// decides), its previous one; in constant time.
func CheckPushKey(k *sign.Keys, id, key string, now time.Time) bool {
	return CheckPushKeyGen(k, id, key, 0, now)
}

// CheckPushKeyGen is CheckPushKey for the key generation gen: a key of
// another generation is refused.
func CheckPushKeyGen(k *sign.Keys, id, key string, gen int, now time.Time) bool {
	if gen == 0 {
		return k.Verify(sign.RTMPKey, key, time.Time{}, now, id)
	}
	return k.Verify(sign.RTMPKey, key, time.Time{}, now, id, "gen", strconv.Itoa(gen))
}
