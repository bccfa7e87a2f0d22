package live

import (
	"net/netip"
	"net/url"
	"strings"
)

// Origins returns the Config.AllowOrigin of a node whose public address
// is publicURL (http.public_url): a page may read its live video
// cross-origin from publicURL's origin, from one of extra
// (http.cors_origins), or, when publicURL names a loopback host (a node
// for this machine only), from a page on a loopback host (another port of
// this machine; a DNS-rebinding page has its own name as origin).
func Origins(publicURL string, extra []string) func(origin string) bool {
	return func(origin string) bool {
		origin = strings.TrimSuffix(origin, "/")
		if u, err := url.Parse(publicURL); err == nil {
			if strings.EqualFold(origin, u.Scheme+"://"+u.Host) {
				return true
			}
			if o, err := url.Parse(origin); err == nil && loopbackHost(u.Hostname()) && loopbackHost(o.Hostname()) {
				return true
			}
		}
		for _, o := range extra {
			if strings.EqualFold(origin, strings.TrimSuffix(o, "/")) {
				return true
			}
		}
		return false
	}
}

// loopbackHost reports whether host is localhost or a loopback address.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
