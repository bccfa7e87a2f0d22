package app

import (
	"time"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/live"
)

// startWebRTC builds the WebRTC side of the node's live server from the
// webrtc section; nil when it is off.
func (a *App) startWebRTC() error {
	c := a.cfg.WebRTC
	if !c.Enabled || a.live == nil {
		return nil
	}
	var servers []live.ICEServer
	for _, u := range config.SplitList(c.ICEServers) {
		servers = append(servers, live.ICEServer{URLs: []string{u}, Username: c.TURNUsername, Credential: c.TURNPassword})
	}
	w, err := live.NewWebRTC(a.live, live.WebRTCConfig{
		ICEServers: servers,
		UDPPortMin: uint16(c.UDPPortMin), UDPPortMax: uint16(c.UDPPortMax),
		UDPMuxAddr: c.UDPMux, TCPMuxAddr: c.TCPMux,
		PublicIPs:    config.SplitList(c.PublicIPs),
		Interfaces:   config.SplitList(c.Interfaces),
		MaxSessions:  c.MaxSessions,
		TranscodeMax: c.TranscodeMax,
	})
	if err != nil {
		return err
	}
	a.webrtc = w
	return nil
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
