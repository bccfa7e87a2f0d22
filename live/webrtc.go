package live

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/pion/dtls/v3"
	"github.com/pion/ice/v4"
	"github.com/pion/interceptor"
	"github.com/pion/webrtc/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vigia/vigia/connlimit"
	"go.uber.org/zap"
)

// ICEServer is a STUN or TURN server the node's ICE agent uses to find its
// public address (STUN) or to relay (TURN).
type ICEServer struct {
	// URLs are stun:, turn: or turns: addresses.
	URLs []string
	// Username and Credential authenticate to a TURN server.
	Username, Credential string
}

// WebRTCConfig configures live video over WebRTC (WHEP).
type WebRTCConfig struct {
	// ICEServers are the STUN and TURN servers of the node's ICE agent.
	// It defaults to none: host candidates only.
	ICEServers []ICEServer

	// UDPPortMin and UDPPortMax bound the UDP ports a session's socket
	// binds (one port per session). Both 0: any free port.
	UDPPortMin, UDPPortMax uint16

	// UDPMuxAddr, when set (":8189"), serves every session on this one UDP
	// socket instead, for a firewall or a Kubernetes Service with one port.
	UDPMuxAddr string

	// TCPMuxAddr, when set (":8189"), also offers ICE over TCP on this one
	// listener, for networks that block UDP.
	TCPMuxAddr string

	// TCPMaxConnections bounds the ICE-TCP connections open at once; past
	// it new ones are closed at once. It defaults to 1024.
	TCPMaxConnections int

	// TCPMaxConnectionsPerAddress bounds the ICE-TCP connections from one
	// source (an IPv6 /64 counting as one). It defaults to 32.
	TCPMaxConnectionsPerAddress int

	// TCPFirstSTUNTimeout bounds the wait for an ICE-TCP connection's
	// first STUN binding request; a connection that sends none is closed.
	// It defaults to 5 s.
	TCPFirstSTUNTimeout time.Duration

	// TCPWriteBuffer bounds the bytes queued for one ICE-TCP connection;
	// past it packets are dropped. It defaults to 256 KiB.
	TCPWriteBuffer int

	// OnTCPRejected, optional, is called with a connlimit.Reason* for each
	// ICE-TCP connection closed for a cap.
	OnTCPRejected func(reason string)

	// PublicIPs, when set, are the addresses put in the host candidates
	// instead of the interfaces' (a node behind a 1:1 NAT, a Kubernetes
	// node's external address).
	PublicIPs []string

	// Interfaces, when set, limits the network interfaces candidates are
	// gathered on, by name; "lo" includes loopback, which is otherwise
	// left out. It defaults to every interface but loopback.
	Interfaces []string

	// AllowPrivateCandidates lets the node check a viewer's candidates on
	// private networks other than those of its own interfaces (a viewer
	// on another subnet of a LAN). Loopback, link-local, unspecified and
	// multicast candidates are never checked, but loopback when "lo" is
	// among Interfaces. It defaults to false.
	AllowPrivateCandidates bool

	// MaxSessions bounds the WebRTC viewers of the node; past it a new one
	// gets 503. It defaults to 1000.
	MaxSessions int

	// MaxSessionsPerToken bounds the sessions opened with one live token
	// (one signed URL). It defaults to 8.
	MaxSessionsPerToken int

	// MaxSessionsPerCamera bounds the sessions of one camera. It defaults
	// to 250.
	MaxSessionsPerCamera int

	// MaxSessionsPerClient bounds the sessions of the cameras of one
	// client (ClientOf). It defaults to 500.
	MaxSessionsPerClient int

	// MaxSessionsPerAddress bounds the sessions of viewers at one address
	// (ClientAddr; an IPv6 /64 counting as one). It defaults to 32.
	MaxSessionsPerAddress int

	// MaxOfferSections bounds the media sections (m= lines) of an offer;
	// a longer one is answered 400. It defaults to 8.
	MaxOfferSections int

	// MaxOfferCandidates bounds the candidates (a=candidate lines) of an
	// offer; past it the offer is answered 400. It defaults to 64.
	MaxOfferCandidates int

	// ClientOf, optional, returns the client owning a camera ("" for
	// none: not counted per client).
	ClientOf func(camera string) string

	// ClientAddr, optional, returns the address of a WHEP request's
	// client (behind trusted proxies, the forwarded one). It defaults to
	// the peer's address.
	ClientAddr func(r *http.Request) netip.Addr

	// ViewerQueue is the frames queued for one viewer; a viewer whose
	// queue is full loses frames (counted) and resumes at the next
	// keyframe. It defaults to 64.
	ViewerQueue int

	// ConnectTimeout bounds the time from the answer to a connected
	// session; a session not connected by then is closed. It defaults to
	// 15 s.
	ConnectTimeout time.Duration

	// GatherTimeout bounds the wait for the node's ICE candidates before
	// the answer is sent with those found so far. It defaults to 3 s.
	GatherTimeout time.Duration

	// Unbatched leaves every session to pion, which seals each packet and
	// sends it in a system call of its own, instead of the node sealing a
	// viewer's frame and sending it in as few calls as the kernel allows
	// (docs/live.md, Sending); for comparison. It defaults to false.
	Unbatched bool

	// AudioTranscodeMax bounds the cameras whose AAC audio is transcoded
	// to Opus at once for WebRTC viewers (one transcoder per camera,
	// whatever its viewers, while one listens); past it a viewer gets the
	// video without sound. It defaults to 64; negative: no sound over
	// WebRTC.
	AudioTranscodeMax int

	// TranscodeMax bounds the cameras transcoded to H.264 at once for
	// viewers whose browser offers no H.265 (transcode_hub.go); past it
	// such a viewer gets 503. It defaults to 0: none, such viewers get
	// 406.
	TranscodeMax int
}

func (c WebRTCConfig) withDefaults() WebRTCConfig {
	if c.MaxSessions <= 0 {
		c.MaxSessions = 1000
	}
	if c.ViewerQueue <= 0 {
		c.ViewerQueue = 64
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 15 * time.Second
	}
	if c.GatherTimeout <= 0 {
		c.GatherTimeout = 3 * time.Second
	}
	for _, d := range []struct {
		n   *int
		def int
	}{
		{&c.MaxSessionsPerToken, defaultMaxSessionsPerToken}, {&c.MaxSessionsPerCamera, defaultMaxSessionsPerCamera},
		{&c.MaxSessionsPerClient, defaultMaxSessionsPerClient}, {&c.MaxSessionsPerAddress, defaultMaxSessionsPerAddress},
		{&c.MaxOfferSections, defaultMaxOfferSections}, {&c.MaxOfferCandidates, defaultMaxOfferCandidates},
	} {
		if *d.n <= 0 {
			*d.n = d.def
		}
	}
	if c.AudioTranscodeMax == 0 {
		c.AudioTranscodeMax = defaultAudioTranscodeMax
	}
	if c.TCPMaxConnections <= 0 {
		c.TCPMaxConnections = defaultTCPMaxConnections
	}
	if c.TCPMaxConnectionsPerAddress <= 0 {
		c.TCPMaxConnectionsPerAddress = defaultTCPMaxConnectionsPerAddress
	}
	if c.TCPFirstSTUNTimeout <= 0 {
		c.TCPFirstSTUNTimeout = defaultTCPFirstSTUNTimeout
	}
	if c.TCPWriteBuffer <= 0 {
		c.TCPWriteBuffer = defaultTCPWriteBuffer
	}
	return c
}

// WebRTC serves a Server's cameras over WebRTC, by WHEP (RFC 9725):
// a viewer POSTs an SDP offer to {live base}/live/{camera}/whep with a
// live token and gets the answer; the camera's video is sent as it comes
// from the pipeline, packetized once for every viewer, never decoded.
type WebRTC struct {
	s   *Server
	cfg WebRTCConfig
	se  webrtc.SettingEngine // each session's API starts from it
	me  *webrtc.MediaEngine
	log *zap.Logger

	closers []func() error      // mux sockets
	tcp     *connlimit.Listener // the ICE-TCP listener, nil without one
	batch   *sendBatcher        // nil when Unbatched
	tc      *transcodes         // nil without TranscodeMax
	atc     *audioTranscodes    // nil without sound

	mu       sync.Mutex
	sessions map[string]*viewer
	counts   sessionCounts // sessions by token, camera, client and address
	closed   bool

	// hookWrite, set by tests only, runs in a session's goroutine before
	// it writes each frame.
	hookWrite func(session string)
	// hookSecrets, set by tests only, sees a session's DTLS secrets
	// before the node derives its SRTP key from them.
	hookSecrets func(*dtlsSecrets)

	requests *prometheus.CounterVec
	dropped  prometheus.Counter
	active   prometheus.GaugeFunc
	// Video packets sent, by who sealed them: the node or pion.
	sealedByNode, sealedByPion prometheus.Counter
}

// NewWebRTC returns the WebRTC side of s. It opens the mux sockets of cfg,
// if any; Close closes them and every session.
func NewWebRTC(s *Server, cfg WebRTCConfig) (*WebRTC, error) {
	cfg = cfg.withDefaults()
	w := &WebRTC{
		s: s, cfg: cfg, sessions: map[string]*viewer{}, counts: sessionCounts{},
		log: s.cfg.Log.With(zap.String("proto", "webrtc")),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vigia_live_webrtc_requests_total", Help: "WHEP requests (new WebRTC viewers) by result."}, []string{"result"}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vigia_live_webrtc_dropped_frames_total", Help: "Video frames not sent to a WebRTC viewer whose queue was full (that viewer only)."}),
	}
	packets := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vigia_live_webrtc_packets_total", Help: "Video packets sent to WebRTC viewers, by who sealed them (SRTP): the node itself or pion."}, []string{"sealed_by"})
	w.sealedByNode, w.sealedByPion = packets.WithLabelValues("node"), packets.WithLabelValues("pion")
	w.active = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vigia_live_webrtc_sessions", Help: "WebRTC viewers connected or connecting."},
		func() float64 { return float64(w.Sessions()) })
	se, err := w.settings()
	if err != nil {
		w.closeMux()
		return nil, err
	}
	me := &webrtc.MediaEngine{}
	if err := registerVideoCodecs(me); err != nil {
		w.closeMux()
		return nil, err
	}
	if err := registerAudioCodecs(me); err != nil {
		w.closeMux()
		return nil, err
	}
	w.se, w.me = se, me
	if s.cfg.Registerer != nil {
		s.cfg.Registerer.MustRegister(w.requests, w.dropped, w.active, packets)
	}
	w.startTranscodes()
	w.startAudio()
	return w, nil
}

// api returns a session's API: its DTLS handshake reports to secrets.
// No interceptors: no retransmission buffers, reports or bandwidth
// estimation per viewer (docs/live.md, WebRTC).
func (w *WebRTC) api(secrets *dtlsSecrets) *webrtc.API {
	se := w.se
	secrets.apply(&se)
	return webrtc.NewAPI(webrtc.WithMediaEngine(w.me), webrtc.WithSettingEngine(se),
		webrtc.WithInterceptorRegistry(&interceptor.Registry{}))
}

// settings builds the ICE settings of cfg.
func (w *WebRTC) settings() (webrtc.SettingEngine, error) {
	cfg := w.cfg
	var se webrtc.SettingEngine
	se.SetICETimeouts(5*time.Second, 10*time.Second, 2*time.Second)
	se.SetICEMulticastDNSMode(ice.MulticastDNSModeDisabled)
	// The DTLS server picks the SRTP protection profile by its own
	// preference among the client's. Chromium, as server, picks
	// AES_CM_128_HMAC_SHA1_80, four to five times the cost of AES-GCM per
	// packet (BenchmarkSRTPProfile); as client it offers both, so the node
	// answers as the DTLS server and prefers GCM, AES-128 first (fewer
	// rounds: never slower than AES-256), with HMAC-SHA1 left for peers
	// without GCM.
	if err := se.SetAnsweringDTLSRole(webrtc.DTLSRoleServer); err != nil {
		return se, err
	}
	se.SetSRTPProtectionProfiles(dtls.SRTP_AEAD_AES_128_GCM, dtls.SRTP_AEAD_AES_256_GCM, dtls.SRTP_AES128_CM_HMAC_SHA1_80)
	newCandidateRule(cfg).apply(&se)
	if len(cfg.Interfaces) > 0 {
		names := slices.Clone(cfg.Interfaces)
		se.SetInterfaceFilter(func(n string) bool { return slices.Contains(names, n) })
		se.SetIncludeLoopbackCandidate(true)
	}
	if len(cfg.PublicIPs) > 0 {
		if err := se.SetICEAddressRewriteRules(webrtc.ICEAddressRewriteRule{External: cfg.PublicIPs,
			AsCandidateType: webrtc.ICECandidateTypeHost, Mode: webrtc.ICEAddressRewriteReplace}); err != nil {
			return se, fmt.Errorf("webrtc public ips %v: %w", cfg.PublicIPs, err)
		}
	}
	if !cfg.Unbatched {
		w.batch = newSendBatcher(w.log)
		n, err := newBatchNet(w.batch)
		if err != nil {
			return se, fmt.Errorf("webrtc network: %w", err)
		}
		se.SetNet(n)
	}
	types := []webrtc.NetworkType{webrtc.NetworkTypeUDP4, webrtc.NetworkTypeUDP6}
	switch {
	case cfg.UDPMuxAddr != "":
		addr, err := net.ResolveUDPAddr("udp", cfg.UDPMuxAddr)
		if err != nil {
			return se, fmt.Errorf("webrtc udp mux %s: %w", cfg.UDPMuxAddr, err)
		}
		udp, err := net.ListenUDP("udp", addr)
		if err != nil {
			return se, fmt.Errorf("webrtc udp mux %s: %w", cfg.UDPMuxAddr, err)
		}
		var conn net.PacketConn = udp
		if w.batch != nil {
			conn = w.batch.wrap(udp)
		}
		mux := ice.NewUDPMuxDefault(ice.UDPMuxParams{UDPConn: conn})
		w.closers = append(w.closers, mux.Close)
		se.SetICEUDPMux(mux)
	case cfg.UDPPortMin > 0 || cfg.UDPPortMax > 0:
		if err := se.SetEphemeralUDPPortRange(cfg.UDPPortMin, cfg.UDPPortMax); err != nil {
			return se, fmt.Errorf("webrtc udp ports %d-%d: %w", cfg.UDPPortMin, cfg.UDPPortMax, err)
		}
	}
	if cfg.TCPMuxAddr != "" {
		mux, err := w.listenTCPMux()
		if err != nil {
			return se, fmt.Errorf("webrtc tcp mux %s: %w", cfg.TCPMuxAddr, err)
		}
		w.closers = append(w.closers, mux.Close)
		se.SetICETCPMux(mux)
		types = append(types, webrtc.NetworkTypeTCP4, webrtc.NetworkTypeTCP6)
	}
	se.SetNetworkTypes(types)
	return se, nil
}

func (w *WebRTC) closeMux() {
	for _, c := range w.closers {
		_ = c()
	}
	w.closers = nil
}

// iceServers returns the configured servers in pion's form.
func (w *WebRTC) iceServers() []webrtc.ICEServer {
	out := make([]webrtc.ICEServer, 0, len(w.cfg.ICEServers))
	for _, s := range w.cfg.ICEServers {
		out = append(out, webrtc.ICEServer{URLs: s.URLs, Username: s.Username, Credential: s.Credential})
	}
	return out
}

// Sessions returns the number of WebRTC viewers, connected or connecting.
func (w *WebRTC) Sessions() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.sessions)
}

// errFull is why a new viewer is refused when MaxSessions are open.
var errFull = errors.New("too many webrtc viewers on this node")

// add registers v under its id; it fails when the node has MaxSessions,
// when one of v's keys has its maximum (a *limitError) or when the node
// is closed.
func (w *WebRTC) add(v *viewer) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errStopped
	}
	if err := w.counts.admit(w.cfg, v.keys); err != nil {
		return err
	}
	if len(w.sessions) >= w.cfg.MaxSessions {
		return errFull
	}
	w.sessions[v.id] = v
	w.counts.add(v.keys)
	return nil
}

func (w *WebRTC) remove(v *viewer) {
	w.mu.Lock()
	if w.sessions[v.id] == v {
		delete(w.sessions, v.id)
		w.counts.release(v.keys)
	}
	w.mu.Unlock()
}

func (w *WebRTC) session(id string) *viewer {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sessions[id]
}

// Close ends every session and closes the mux sockets; it returns once
// the sessions' goroutines have exited.
func (w *WebRTC) Close() {
	w.mu.Lock()
	w.closed = true
	all := make([]*viewer, 0, len(w.sessions))
	for _, v := range w.sessions {
		all = append(all, v)
	}
	w.mu.Unlock()
	for _, v := range all {
		v.close()
	}
	if w.tc != nil {
		w.tc.closeAll()
	}
	w.closeMux()
}
