package rtsp

import (
	"net/netip"
	"strings"

	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"go.uber.org/zap"

	"github.com/vigia/vigia/camera"
)

// addressAllowed is the address policy of the camera's dial guard.
func (s *Source) addressAllowed(ip netip.Addr) bool {
	if s.allowed != nil {
		return s.allowed(ip)
	}
	return camera.AddressAllowed(ip, s.cfg.AllowPrivateNetworks || s.cam.Trusted)
}

// guardSource returns the OnResponse of a gortsplib client: it removes
// from a SETUP answer's Transport header a source= naming an address that
// allowed refuses. gortsplib sends RTP and RTCP over UDP to source= when
// given, else to the address of the RTSP connection, which the dial guard
// has let through; so a camera cannot aim the node's packets at loopback
// or private addresses by naming them.
func guardSource(allowed func(netip.Addr) bool, log *zap.Logger) func(*base.Response) {
	return func(res *base.Response) {
		vals, ok := res.Header["Transport"]
		if !ok {
			return
		}
		for i, v := range vals {
			vals[i] = stripSource(v, allowed, log)
		}
	}
}

// stripSource removes the refused source= parameters of a Transport
// header value (one or more transports separated by commas).
func stripSource(v string, allowed func(netip.Addr) bool, log *zap.Logger) string {
	transports := strings.Split(v, ",")
	for i, tr := range transports {
		params := strings.Split(tr, ";")
		kept := params[:0]
		for _, p := range params {
			k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(k, "source") {
				ip, err := netip.ParseAddr(strings.Trim(strings.TrimSpace(val), `"`))
				if err != nil || !allowed(ip.Unmap()) {
					log.Warn("camera's SETUP names a source the address guard refuses; media go to the camera's address",
						zap.String("source", val))
					continue
				}
			}
			kept = append(kept, p)
		}
		transports[i] = strings.Join(kept, ";")
	}
	return strings.Join(transports, ",")
}
