package live

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// Defaults of the WebRTC session and offer bounds (WebRTCConfig).
const (
	defaultMaxSessionsPerToken   = 8
	defaultMaxSessionsPerCamera  = 250
	defaultMaxSessionsPerClient  = 500
	defaultMaxSessionsPerAddress = 32
	defaultMaxOfferSections      = 8
	defaultMaxOfferCandidates    = 64
)

// Results of vigia_live_webrtc_requests_total for an offer refused by a
// bound.
const (
	resultPerToken   = "per_token"
	resultPerCamera  = "per_camera"
	resultPerClient  = "per_client"
	resultPerAddress = "per_address"
	resultSections   = "too_many_sections"
	resultCandidates = "too_many_candidates"
)

// sessionKeys are what a session counts under: its token, its camera, the
// camera's client (empty: none) and its viewer's address.
type sessionKeys struct {
	token, camera, client, addr string
}

// limitError says which bound refused a session.
type limitError struct {
	result string // metric result
	msg    string
}

func (e *limitError) Error() string { return e.msg }

// sessionCounts counts the sessions under each key; guarded by WebRTC.mu.
type sessionCounts map[string]int

func (k sessionKeys) all() []string {
	out := []string{"t:" + k.token, "c:" + k.camera, "a:" + k.addr}
	if k.client != "" {
		out = append(out, "k:"+k.client)
	}
	return out
}

// admit checks the per-key bounds of cfg for k; nil when within them.
func (c sessionCounts) admit(cfg WebRTCConfig, k sessionKeys) error {
	switch {
	case c["t:"+k.token] >= cfg.MaxSessionsPerToken:
		return &limitError{resultPerToken, fmt.Sprintf("too many webrtc sessions for this live URL (%d)", cfg.MaxSessionsPerToken)}
	case c["a:"+k.addr] >= cfg.MaxSessionsPerAddress:
		return &limitError{resultPerAddress, fmt.Sprintf("too many webrtc sessions from this address (%d)", cfg.MaxSessionsPerAddress)}
	case c["c:"+k.camera] >= cfg.MaxSessionsPerCamera:
		return &limitError{resultPerCamera, fmt.Sprintf("too many webrtc viewers of this camera (%d)", cfg.MaxSessionsPerCamera)}
	case k.client != "" && c["k:"+k.client] >= cfg.MaxSessionsPerClient:
		return &limitError{resultPerClient, fmt.Sprintf("too many webrtc viewers of this client's cameras (%d)", cfg.MaxSessionsPerClient)}
	}
	return nil
}

func (c sessionCounts) add(k sessionKeys) {
	for _, s := range k.all() {
		c[s]++
	}
}

func (c sessionCounts) release(k sessionKeys) {
	for _, s := range k.all() {
		if c[s] <= 1 {
			delete(c, s)
		} else {
			c[s]--
		}
	}
}

// keysOf returns the keys of a session asked for by r for camera.
func (w *WebRTC) keysOf(r *http.Request, camera string) sessionKeys {
	k := sessionKeys{token: r.URL.Query().Get("sig"), camera: camera}
	if w.cfg.ClientOf != nil {
		k.client = w.cfg.ClientOf(camera)
	}
	var a netip.Addr
	if w.cfg.ClientAddr != nil {
		a = w.cfg.ClientAddr(r)
	} else if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		a = ap.Addr()
	}
	k.addr = addrKey(a)
	return k
}

// addrKey is the source a viewer counts under: the IPv4 address, the /64
// of an IPv6 one; every unreadable address shares one key.
func addrKey(a netip.Addr) string {
	if !a.IsValid() {
		return "unknown"
	}
	a = a.Unmap().WithZone("")
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// errOfferShape is why an offer is refused for its shape (media sections
// or candidates).
var errOfferShape = errors.New("offer refused")

// checkOfferShape counts the media sections and candidates of an SDP
// offer against cfg; it returns the metric result and message of the
// first bound passed, or "" when within them.
func checkOfferShape(cfg WebRTCConfig, sdp string) (result, msg string) {
	sections, candidates := 0, 0
	for line := range strings.SplitSeq(sdp, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "m="):
			sections++
		case strings.HasPrefix(line, "a=candidate:"):
			candidates++
		}
	}
	if sections > cfg.MaxOfferSections {
		return resultSections, fmt.Sprintf("%v: %d media sections, at most %d", errOfferShape, sections, cfg.MaxOfferSections)
	}
	if candidates > cfg.MaxOfferCandidates {
		return resultCandidates, fmt.Sprintf("%v: %d candidates, at most %d", errOfferShape, candidates, cfg.MaxOfferCandidates)
	}
	return "", ""
}
