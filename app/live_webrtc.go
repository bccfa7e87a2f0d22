package app

import (
	"cmp"
	"context"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/vigia/vigia/api"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/connlimit"
	"github.com/vigia/vigia/live"
)

// startWebRTC builds the WebRTC side of the node's live server from the
// webrtc section; nil when it is off.
func (a *App) startWebRTC() error {
	c := a.cfg.WebRTC
	if !c.Enabled || a.live == nil {
		return nil
	}
	if c.UDPMux != "" {
		if err := checkUDP("webrtc.udp_mux", c.UDPMux); err != nil {
			return err
		}
	}
	if c.TCPMux != "" {
		if err := checkTCP("webrtc.tcp_mux", c.TCPMux); err != nil {
			return err
		}
	}
	var servers []live.ICEServer
	for _, u := range config.SplitList(c.ICEServers) {
		servers = append(servers, live.ICEServer{URLs: []string{u}, Username: c.TURNUsername, Credential: c.TURNPassword})
	}
	w, err := live.NewWebRTC(a.live, live.WebRTCConfig{
		ICEServers: servers,
		UDPPortMin: uint16(c.UDPPortMin), UDPPortMax: uint16(c.UDPPortMax),
		UDPMuxAddr: c.UDPMux, TCPMuxAddr: c.TCPMux,
		PublicIPs:           config.SplitList(c.PublicIPs),
		Interfaces:          config.SplitList(c.Interfaces),
		MaxSessions:         c.MaxSessions,
		MaxSessionsPerToken: c.MaxSessionsPerToken, MaxSessionsPerCamera: c.MaxSessionsPerCamera,
		MaxSessionsPerClient: c.MaxSessionsPerClient, MaxSessionsPerAddress: c.MaxSessionsPerAddress,
		MaxOfferSections: c.MaxOfferSections, MaxOfferCandidates: c.MaxOfferCandidates,
		ClientOf:          a.cameraClient,
		ClientAddr:        func(r *http.Request) netip.Addr { return api.ClientAddr(r, a.trustedProxies()) },
		TCPMaxConnections: c.TCPMaxConnections, TCPMaxConnectionsPerAddress: c.TCPMaxConnectionsPerAddress,
		TCPFirstSTUNTimeout: time.Duration(c.TCPFirstSTUNTimeout), TCPWriteBuffer: int(c.TCPWriteBuffer),
		OnTCPRejected: a.rejectedConnections("webrtc_tcp", []string{connlimit.ReasonMaxConnections, connlimit.ReasonPerAddress}),
		TranscodeMax:  c.TranscodeMax,
		// 0 in the configuration turns the sound transcodes off, which
		// live.WebRTCConfig says with a negative bound.
		AudioTranscodeMax: cmp.Or(c.AudioTranscodeMax, -1),
	})
	if err != nil {
		return err
	}
	a.webrtc = w
	return nil
}

// cameraClient returns the client owning camera in the cluster's camera
// records, "" when unknown (a camera of the configuration file).
func (a *App) cameraClient(camera string) string {
	if a.bus == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, ok, err := a.bus.GetCamera(ctx, camera)
	if err != nil || !ok || c.ClientID == 0 {
		return ""
	}
	return strconv.FormatInt(c.ClientID, 10)
}

// closeWebRTC ends the WebRTC sessions.
func (a *App) closeWebRTC() {
	if a.webrtc != nil {
		a.webrtc.Close()
	}
}

// liveURL returns the signed live address of camera on the node whose
// HTTP base is base: LL-HLS when hls is set or WebRTC is off, else WHEP.
// Every node of a cluster is expected to have webrtc.enabled alike.
func (a *App) liveURL(base, camera string, hls bool, exp time.Time) string {
	if hls || !a.cfg.WebRTC.Enabled {
		return live.URL(base, a.keys, camera, exp)
	}
	return live.WHEPURL(base, a.keys, camera, exp)
}
