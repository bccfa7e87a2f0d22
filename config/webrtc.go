package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// WebRTCConfig is the webrtc section (live video over WebRTC, WHEP).
type WebRTCConfig struct {
	Enabled                     bool     `yaml:"enabled" default:"true" doc:"Serve live video over WebRTC (WHEP at {live base}/live/{camera}/whep) besides LL-HLS; the live URLs handed out default to it. false: live URLs are LL-HLS only."`
	ICEServers                  string   `yaml:"ice_servers" doc:"Comma-separated STUN and TURN servers of the node's ICE agent (stun:host:port, turn:host:port?transport=udp, turns:host:port), for a node that does not know its public address. Empty: host candidates only."`
	TURNUsername                string   `yaml:"turn_username" doc:"User name for the TURN servers of webrtc.ice_servers."`
	TURNPassword                string   `yaml:"turn_password" secret:"true" doc:"Password for the TURN servers of webrtc.ice_servers."`
	UDPPortMin                  int      `yaml:"udp_port_min" default:"0" doc:"Lowest UDP port of a WebRTC session (one port per session); with webrtc.udp_port_max, the range to open in a firewall. 0 with udp_port_max 0: any free port."`
	UDPPortMax                  int      `yaml:"udp_port_max" default:"0" doc:"Highest UDP port of a WebRTC session."`
	UDPMux                      string   `yaml:"udp_mux" doc:"Address (host:port, e.g. :8189) of one UDP socket serving every WebRTC session, instead of a port per session: one port to open or to publish from a container (Kubernetes hostPort or a UDP Service). Empty: a port per session. Either way a viewer's frame leaves in one system call per run of equal-sized packets (UDP segmentation offload, docs/live.md): the choice does not change what a viewer costs."`
	TCPMux                      string   `yaml:"tcp_mux" doc:"Address (host:port, e.g. :8189) of a TCP listener that also offers ICE over TCP, for viewers whose network blocks UDP. Empty: UDP only."`
	PublicIPs                   string   `yaml:"public_ips" doc:"Comma-separated addresses put in the node's ICE candidates instead of its interfaces' (a node behind a 1:1 NAT, a Kubernetes node's external address). Empty: the interfaces' addresses."`
	Interfaces                  string   `yaml:"interfaces" doc:"Comma-separated network interfaces the node gathers candidates on (lo includes loopback, for tests on one machine). Empty: every interface but loopback."`
	AllowPrivateCandidates      bool     `yaml:"allow_private_candidates" default:"false" doc:"Let the node send ICE checks (STUN) to a viewer's candidates on private networks other than those of its own interfaces (viewers on another subnet of a LAN). Loopback, link-local, unspecified and multicast candidates are never checked (loopback only when webrtc.interfaces includes lo); public ones and those on the networks of the node's interfaces always are."`
	MaxSessionsPerToken         int      `yaml:"max_sessions_per_token" default:"8" doc:"WebRTC sessions opened with one live URL (one token) at once; past it 429, counted in vigia_live_webrtc_requests_total{result=\"per_token\"}."`
	MaxSessionsPerCamera        int      `yaml:"max_sessions_per_camera" default:"250" doc:"WebRTC sessions of one camera at once; past it 429 (result per_camera)."`
	MaxSessionsPerClient        int      `yaml:"max_sessions_per_client" default:"500" doc:"WebRTC sessions of the cameras of one client at once; past it 429 (result per_client)."`
	MaxSessionsPerAddress       int      `yaml:"max_sessions_per_address" default:"32" doc:"WebRTC sessions of viewers at one address (the client address behind http.trusted_proxies; an IPv6 /64 counting as one) at once; past it 429 (result per_address)."`
	MaxOfferSections            int      `yaml:"max_offer_sections" default:"8" doc:"Media sections (m= lines) of a WHEP offer; a longer one is answered 400 (result too_many_sections). Browsers offer one to three."`
	MaxOfferCandidates          int      `yaml:"max_offer_candidates" default:"64" doc:"Candidates (a=candidate lines) of a WHEP offer; past it the offer is answered 400 (result too_many_candidates)."`
	TCPMaxConnections           int      `yaml:"tcp_max_connections" default:"1024" doc:"ICE-TCP connections (webrtc.tcp_mux) held at once; past it new ones are closed at once and counted in vigia_rejected_connections_total{listener=\"webrtc_tcp\"}."`
	TCPMaxConnectionsPerAddress int      `yaml:"tcp_max_connections_per_address" default:"32" doc:"ICE-TCP connections from one address (an IPv6 /64 counting as one); past it new ones from that address are closed at once and counted."`
	TCPFirstSTUNTimeout         Duration `yaml:"tcp_first_stun_timeout" default:"5s" doc:"Time an ICE-TCP connection has to send its first STUN binding request; one that sends none is closed."`
	TCPWriteBuffer              Size     `yaml:"tcp_write_buffer" default:"256KiB" doc:"Bytes queued for one ICE-TCP connection before its packets are dropped (the viewer resumes at the next keyframe)."`
	MaxSessions                 int      `yaml:"max_sessions" default:"1000" doc:"WebRTC viewers this node serves at once; past it a new one gets 503 (the player then plays LL-HLS)."`
	AudioTranscodeMax           int      `yaml:"audio_transcode_max" default:"64" doc:"Cameras whose AAC audio this node transcodes to Opus at once for WebRTC viewers: one transcoder per camera while anyone listens, about 0.4 % of a core each (docs/live.md, Sound over WebRTC). Past it a viewer gets the video without sound, counted in vigia_live_audio_transcode_refused_total. 0: no sound from AAC cameras over WebRTC (G.711 still passes)."`
	TranscodeMax                int      `yaml:"transcode_max" default:"2" doc:"H.265 cameras this node transcodes to H.264 at once for live viewers whose browser has no H.265, over WebRTC and LL-HLS (also with webrtc.enabled false): one transcode per camera while anyone watches it, about a fifth of a core per 720p15 camera (docs/live.md). Past it such a viewer gets 503 and the player says why. 0: no transcoding (such viewers get 406)."`
}

// SplitList splits a comma-separated list, dropping blanks.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// validateWebRTC checks the webrtc section.
func (c *Config) validateWebRTC(v *validator) {
	w := c.WebRTC
	for _, s := range SplitList(w.ICEServers) {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "stun" && u.Scheme != "turn" && u.Scheme != "turns") || u.Opaque == "" {
			v.add("webrtc.ice_servers", fmt.Errorf("%w %q (want stun:, turn: or turns:host:port)", ErrInvalidValue, s))
		}
	}
	for _, k := range []struct {
		key string
		n   int
	}{{"webrtc.udp_port_min", w.UDPPortMin}, {"webrtc.udp_port_max", w.UDPPortMax}} {
		if k.n < 0 || k.n > 65535 {
			v.add(k.key, fmt.Errorf("%w %d (want 0 to 65535)", ErrInvalidValue, k.n))
		}
	}
	if w.UDPPortMax < w.UDPPortMin || (w.UDPPortMin == 0) != (w.UDPPortMax == 0) {
		v.add("webrtc.udp_port_max", fmt.Errorf("%w %d (want 0 with udp_port_min 0, else at least udp_port_min %d)",
			ErrInvalidValue, w.UDPPortMax, w.UDPPortMin))
	}
	if w.UDPMux != "" {
		v.hostPort("webrtc.udp_mux", w.UDPMux)
	}
	if w.TCPMux != "" {
		v.hostPort("webrtc.tcp_mux", w.TCPMux)
	}
	for _, ip := range SplitList(w.PublicIPs) {
		if net.ParseIP(ip) == nil {
			v.add("webrtc.public_ips", fmt.Errorf("%w %q (want IP addresses)", ErrInvalidValue, ip))
		}
	}
	v.atLeast("webrtc.max_sessions", w.MaxSessions, 1)
	for _, k := range []struct {
		key string
		n   int
	}{{"webrtc.max_sessions_per_token", w.MaxSessionsPerToken}, {"webrtc.max_sessions_per_camera", w.MaxSessionsPerCamera},
		{"webrtc.max_sessions_per_client", w.MaxSessionsPerClient}, {"webrtc.max_sessions_per_address", w.MaxSessionsPerAddress},
		{"webrtc.max_offer_sections", w.MaxOfferSections}, {"webrtc.max_offer_candidates", w.MaxOfferCandidates}} {
		v.atLeast(k.key, k.n, 1)
	}
	v.atLeast("webrtc.tcp_max_connections", w.TCPMaxConnections, 1)
	v.atLeast("webrtc.tcp_max_connections_per_address", w.TCPMaxConnectionsPerAddress, 1)
	v.positive("webrtc.tcp_first_stun_timeout", w.TCPFirstSTUNTimeout)
	if w.TCPWriteBuffer < 16<<10 || w.TCPWriteBuffer > 64<<20 {
		v.add("webrtc.tcp_write_buffer", fmt.Errorf("%w %d (want 16KiB to 64MiB)", ErrInvalidValue, w.TCPWriteBuffer))
	}
	v.atLeast("webrtc.transcode_max", w.TranscodeMax, 0)
	v.atLeast("webrtc.audio_transcode_max", w.AudioTranscodeMax, 0)
}
