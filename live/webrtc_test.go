package live

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pion/dtls/v3"
	"github.com/pion/webrtc/v4"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// withoutParams drops parameter sets (the node puts the track's in front
// of a keyframe that lacks them).
func withoutParams(c media.Codec, nalus [][]byte) [][]byte {
	var out [][]byte
	for _, n := range nalus {
		if len(n) == 0 {
			continue
		}
		if c == media.H265 {
			if typ := (n[0] >> 1) & 0x3f; typ >= 32 && typ <= 34 {
				continue
			}
		} else if typ := n[0] & 0x1f; typ == 7 || typ == 8 {
			continue
		}
		out = append(out, n)
	}
	return out
}

func sameNALUs(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestWebRTCPlays checks that a WHEP viewer (pion) receives the camera's
// frames as the pipeline gave them, byte for byte (no decoding), starting
// at a keyframe that carries its parameter sets, for H.264 and H.265, and
// for a camera that sends its parameter sets only in the SDP (the track's
// are put in front of each keyframe), through a socket per session or the
// mux, each frame batched (by UDP segmentation offload where the kernel
// takes it) or each packet sent alone.
func TestWebRTCPlays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		codec   string
		media   media.Codec
		outband bool // parameter sets only in the track
		cfg     WebRTCConfig
	}{
		{"h264", synth.CodecH264, media.H264, false, WebRTCConfig{}},
		{"h265", synth.CodecH265, media.H265, false, WebRTCConfig{}},
		{"h264 parameters out of band", synth.CodecH264, media.H264, true, WebRTCConfig{}},
		{"h265 parameters out of band", synth.CodecH265, media.H265, true, WebRTCConfig{}},
		{"h264 through the mux", synth.CodecH264, media.H264, false, WebRTCConfig{UDPMuxAddr: "127.0.0.1:0"}},
		{"h264 unbatched", synth.CodecH264, media.H264, false, WebRTCConfig{Unbatched: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := newRTCNode(t, tc.cfg)
			c := n.s.Consumer()("cam")
			defer c.Close()
			src := newSource(t, tc.codec, true)
			if tc.outband {
				clip := *src.clip
				clip.Units = slices.Clone(clip.Units)
				for i := range clip.Units {
					clip.Units[i].NALUs = withoutParams(tc.media, clip.Units[i].NALUs)
				}
				src.clip = &clip
			}
			c.Tracks(src.tracks())
			play(t, c, src)

			v := dial(t, n.whepURL("cam", time.Now().Add(time.Hour)), tc.media)
			frames := v.waitFrames(t, src.gop()+10, 20*time.Second)
			units := src.clip.Units
			if !units[0].Key {
				t.Fatal("clip does not start with a keyframe")
			}
			first := withoutParams(tc.media, frames[0])
			start := -1
			for i, u := range units {
				if u.Key && sameNALUs(first, withoutParams(tc.media, u.NALUs)) {
					start = i
				}
			}
			if start < 0 {
				t.Fatalf("first frame received (%d NAL units) is no keyframe of the clip", len(frames[0]))
			}
			if len(frames[0]) == len(first) {
				t.Errorf("first frame carries no parameter sets")
			}
			for k, f := range frames {
				want := withoutParams(tc.media, units[(start+k)%len(units)].NALUs)
				if !sameNALUs(withoutParams(tc.media, f), want) {
					t.Fatalf("frame %d after the first differs from the clip's", k)
				}
			}
			if b := n.w.batch; b != nil && gsoSupported(t) && b.gsoPackets.Load() == 0 {
				t.Errorf("no packet went by UDP segmentation offload (%d by sendmmsg, %d alone)",
					b.mmsgPackets.Load(), b.singlePackets.Load())
			}
			// Batched, the node seals the packets itself; unbatched, pion does.
			if sealed := n.session(t, v).sealedN.Load(); (sealed > 0) != !tc.cfg.Unbatched {
				t.Errorf("%d packets sealed by the node (unbatched %v)", sealed, tc.cfg.Unbatched)
			}
		})
	}
}

// TestWebRTCSRTPProfile checks that the node answers as the DTLS server
// and picks AEAD_AES_128_GCM from a viewer that offers it, whatever the
// viewer prefers (pion AES-256, Chromium HMAC-SHA1), and HMAC-SHA1 from
// one that offers nothing else; and that the node seals the packets
// itself with every profile and DTLS cipher suite (the key it derives
// from the handshake is the session's: the viewer decrypts them).
func TestWebRTCSRTPProfile(t *testing.T) {
	t.Parallel()
	n := newRTCNode(t, WebRTCConfig{})
	src := n.playH264(t, "cam")
	for _, tc := range []struct {
		name     string
		profiles []dtls.SRTPProtectionProfile
		suites   []dtls.CipherSuiteID
		want     string
	}{
		{"pion's offer", nil, nil, "SRTP_AEAD_AES_128_GCM"},
		{"HMAC-SHA1 first", []dtls.SRTPProtectionProfile{dtls.SRTP_AES128_CM_HMAC_SHA1_80,
			dtls.SRTP_AEAD_AES_256_GCM, dtls.SRTP_AEAD_AES_128_GCM}, nil, "SRTP_AEAD_AES_128_GCM"},
		{"HMAC-SHA1 only", []dtls.SRTPProtectionProfile{dtls.SRTP_AES128_CM_HMAC_SHA1_80}, nil, "SRTP_AES128_CM_HMAC_SHA1_80"},
		{"AES-256-GCM only", []dtls.SRTPProtectionProfile{dtls.SRTP_AEAD_AES_256_GCM}, nil, "SRTP_AEAD_AES_256_GCM"},
		{"DTLS suite AES-256-GCM-SHA384", nil, []dtls.CipherSuiteID{dtls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}, "SRTP_AEAD_AES_128_GCM"},
		{"DTLS suite AES-256-CBC-SHA", nil, []dtls.CipherSuiteID{dtls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA}, "SRTP_AEAD_AES_128_GCM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := clientAPIWith(t, media.H264, func(se *webrtc.SettingEngine) {
				if len(tc.profiles) > 0 {
					se.SetSRTPProtectionProfiles(tc.profiles...)
				}
				if len(tc.suites) > 0 {
					se.SetDTLSCipherSuites(tc.suites...)
				}
			})
			v := dialWith(t, n.whepURL("cam", time.Now().Add(time.Hour)), media.H264, api)
			if !strings.Contains(v.pc.RemoteDescription().SDP, "a=setup:passive") {
				t.Error("the answer does not make the node the DTLS server (a=setup:passive)")
			}
			v.waitFrames(t, 2*src.gop(), 20*time.Second)
			var got string
			for _, s := range v.pc.GetStats() {
				if ts, ok := s.(webrtc.TransportStats); ok {
					got = ts.SRTPCipher
				}
			}
			if got != tc.want {
				t.Errorf("SRTP protection profile %q, want %q", got, tc.want)
			}
			if n.session(t, v).sealedN.Load() == 0 {
				t.Error("no packet sealed by the node: its key did not match the session's")
			}
		})
	}
}

// TestWebRTCSealFallback checks that a session whose key the node gets
// wrong is sent through pion instead, whole.
func TestWebRTCSealFallback(t *testing.T) {
	t.Parallel()
	n := newRTCNode(t, WebRTCConfig{})
	n.w.hookSecrets = func(d *dtlsSecrets) {
		d.mu.Lock()
		d.master[0] ^= 1
		d.mu.Unlock()
	}
	src := n.playH264(t, "cam")
	v := dial(t, n.whepURL("cam", time.Now().Add(time.Hour)), media.H264)
	v.waitFrames(t, 2*src.gop(), 20*time.Second)
	if sealed := n.session(t, v).sealedN.Load(); sealed != 0 {
		t.Errorf("%d packets sealed by the node with a wrong key", sealed)
	}
}

// TestWHEPRefusals checks the answers to requests that get no session.
func TestWHEPRefusals(t *testing.T) {
	n := newRTCNode(t, WebRTCConfig{MaxSessions: 1})
	h265 := n.s.Consumer()("h265")
	defer h265.Close()
	h265.Tracks(newSource(t, synth.CodecH265, true).tracks())
	silent := n.s.Consumer()("silent") // no tracks yet
	defer silent.Close()
	_, offer := offerSDP(t, media.H264)
	hour := time.Now().Add(time.Hour)
	good := n.whepURL("h265", hour)
	for _, tc := range []struct {
		name   string
		target string
		ctype  string
		body   string
		want   int
	}{
		{"no token", n.srv.URL + "/live/h265/whep", "application/sdp", offer, 401},
		{"other camera's token", withToken(good, "other", hour), "application/sdp", offer, 403},
		{"expired token", withToken(good, "h265", time.Now().Add(-time.Minute)), "application/sdp", offer, 403},
		{"bad signature", strings.Replace(good, "sig=", "sig=0", 1), "application/sdp", offer, 403},
		{"not sdp", good, "application/json", offer, 415},
		{"too large", good, "application/sdp", strings.Repeat("a", maxOfferBytes+1), 413},
		{"not here", n.whepURL("elsewhere", hour), "application/sdp", offer, 404},
		{"not started", n.whepURL("silent", hour), "application/sdp", offer, 503},
		{"codec not offered", good, "application/sdp", offer, 406},
		{"not an offer", good, "application/sdp", "v=0\r\na=rtpmap:96 H265/90000\r\n", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := http.Post(tc.target, tc.ctype, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Errorf("status %d, want %d", res.StatusCode, tc.want)
			}
		})
	}
	if got := n.w.Sessions(); got != 0 {
		t.Errorf("%d sessions left after refusals", got)
	}

	// MaxSessions: the second viewer is refused while the first is on.
	cam := n.s.Consumer()("cam")
	defer cam.Close()
	src := newSource(t, synth.CodecH264, true)
	cam.Tracks(src.tracks())
	play(t, cam, src)
	dial(t, n.whepURL("cam", hour), media.H264).waitFrames(t, 1, 20*time.Second)
	_, offer2 := offerSDP(t, media.H264)
	if code, _, _ := postOffer(t, n.whepURL("cam", hour), offer2); code != http.StatusServiceUnavailable {
		t.Errorf("viewer past max_sessions: %d, want 503", code)
	}
}

// TestWebRTCSessionEnds checks that a session ends when its token expires
// unless a newer token renewed it (PATCH), when it is deleted, and when
// the camera stops on the node.
func TestWebRTCSessionEnds(t *testing.T) {
	t.Parallel()
	n := newRTCNode(t, WebRTCConfig{})
	c := n.s.Consumer()("cam")
	src := newSource(t, synth.CodecH264, true)
	c.Tracks(src.tracks())
	play(t, c, src)

	// Long enough for both sessions to connect first on a loaded machine
	// or under -race (ICE and DTLS take seconds there).
	soon := time.Now().Add(10 * time.Second)
	a := dial(t, n.whepURL("cam", soon), media.H264)
	b := dial(t, n.whepURL("cam", soon), media.H264)
	a.waitFrames(t, 1, 20*time.Second)
	b.waitFrames(t, 1, 20*time.Second)
	renew := func(loc string, exp time.Time, camera string) int {
		req, _ := http.NewRequest(http.MethodPatch, withToken(n.srv.URL+loc, camera, exp), nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := renew(b.location, time.Now().Add(time.Hour), "other"); code != http.StatusForbidden {
		t.Errorf("renewal with another camera's token: %d, want 403", code)
	}
	if code := renew(b.location, time.Now().Add(time.Hour), "cam"); code != http.StatusNoContent {
		t.Fatalf("renewal: %d, want 204", code)
	}
	testenv.WaitFor(t, 30*time.Second, "the unrenewed session to end", func() bool { return n.w.Sessions() == 1 })
	if n.w.session(b.location[strings.LastIndex(b.location, "/")+1:]) == nil {
		t.Fatal("the renewed session ended with the unrenewed one")
	}
	got := len(b.received())
	b.waitFrames(t, got+5, 10*time.Second)

	req, _ := http.NewRequest(http.MethodDelete, n.srv.URL+b.location, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || n.w.Sessions() != 0 {
		t.Fatalf("DELETE: %d, %d sessions left", res.StatusCode, n.w.Sessions())
	}

	d := dial(t, n.whepURL("cam", time.Now().Add(time.Hour)), media.H264)
	d.waitFrames(t, 1, 20*time.Second)
	c.Close()
	testenv.WaitFor(t, 10*time.Second, "the session of a stopped camera to end", func() bool { return n.w.Sessions() == 0 })
}

// TestWebRTCSlowViewer checks that a viewer that cannot keep up loses
// frames itself (counted) while another viewer of the camera gets every
// frame, and that the pipeline's calls never wait for either.
func TestWebRTCSlowViewer(t *testing.T) {
	t.Parallel()
	n := newRTCNode(t, WebRTCConfig{ViewerQueue: 8})
	src := n.playH264(t, "cam")

	// The hook is set before any session runs; it stalls the session
	// named once the valve is shut.
	stall := newValve()
	var slowID atomic.Value
	slowID.Store("")
	n.w.hookWrite = func(id string) {
		if id == slowID.Load().(string) {
			stall.pass()
		}
	}
	defer stall.open()
	hour := time.Now().Add(time.Hour)
	slow := dial(t, n.whepURL("cam", hour), media.H264)
	slow.waitFrames(t, 1, 20*time.Second)
	fast := dial(t, n.whepURL("cam", hour), media.H264)
	fast.waitFrames(t, 1, 20*time.Second)
	id := slow.location[strings.LastIndex(slow.location, "/")+1:]
	stall.shut()
	slowID.Store(id)
	sv := n.w.session(id)
	testenv.WaitFor(t, 20*time.Second, "the stalled viewer to drop frames", func() bool { return sv.dropped.Load() > 0 })

	// Meanwhile the pipeline went on (play's ticker) and the other viewer
	// lost nothing: its frames are consecutive frames of the clip.
	start := len(fast.received())
	frames := fast.waitFrames(t, start+2*src.gop(), 20*time.Second)
	units := src.clip.Units
	base := -1
	for i, u := range units {
		if sameNALUs(withoutParams(media.H264, frames[start]), withoutParams(media.H264, u.NALUs)) {
			base = i
			break
		}
	}
	if base < 0 {
		t.Fatal("frame not from the clip")
	}
	for k, f := range frames[start:] {
		if !sameNALUs(withoutParams(media.H264, f), withoutParams(media.H264, units[(base+k)%len(units)].NALUs)) {
			t.Fatalf("the fast viewer lost frames while the slow one stalled (at frame %d)", k)
		}
	}
	fv := n.w.session(fast.location[strings.LastIndex(fast.location, "/")+1:])
	if fv.dropped.Load() != 0 {
		t.Errorf("the fast viewer dropped %d frames", fv.dropped.Load())
	}
	stall.open()
	got := len(slow.received())
	slow.waitFrames(t, got+src.gop()+1, 20*time.Second)
}

// TestWebRTCICEConfig checks the ICE settings: one UDP socket for every
// session (a viewer plays through it, and every UDP candidate of the
// answers is on its port), ICE over TCP on one listener (a viewer plays
// through it), and public
// addresses put in the candidates instead of the interfaces'.
func TestWebRTCICEConfig(t *testing.T) {
	t.Parallel()
	n := newRTCNode(t, WebRTCConfig{UDPMuxAddr: "127.0.0.1:0", TCPMuxAddr: "127.0.0.1:0"})
	src := n.playH264(t, "cam")
	a := dial(t, n.whepURL("cam", time.Now().Add(time.Hour)), media.H264)
	b := dial(t, n.whepURL("cam", time.Now().Add(time.Hour)), media.H264)
	a.waitFrames(t, 1, 20*time.Second)
	b.waitFrames(t, 1, 20*time.Second)
	ports := map[string]bool{}
	tcp := false
	for _, cl := range []*rtcClient{a, b} {
		for _, line := range strings.Split(cl.pc.RemoteDescription().SDP, "\n") {
			f := strings.Fields(line)
			if !strings.HasPrefix(line, "a=candidate:") || len(f) < 8 {
				continue
			}
			switch strings.ToLower(f[2]) {
			case "udp":
				ports[f[5]] = true
			case "tcp":
				tcp = tcp || strings.Contains(line, "tcptype passive")
			}
		}
	}
	if len(ports) != 1 {
		t.Errorf("UDP candidates on ports %v, want the mux's one", ports)
	}
	if !tcp {
		t.Error("no passive TCP candidate with tcp_mux")
	}
	// A viewer that can only use TCP plays through the TCP mux; pion
	// seals its packets, the node's sealing being for its UDP sockets.
	overTCP := dialWith(t, n.whepURL("cam", time.Now().Add(time.Hour)), media.H264,
		clientAPIWith(t, media.H264, func(se *webrtc.SettingEngine) {
			se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeTCP4})
		}))
	overTCP.waitFrames(t, 2*src.gop(), 20*time.Second)
	if sealed := n.session(t, overTCP).sealedN.Load(); sealed != 0 {
		t.Errorf("%d packets sealed by the node for a viewer over TCP", sealed)
	}
	if n.session(t, a).sealedN.Load() == 0 {
		t.Error("no packet sealed by the node for a viewer through the UDP mux")
	}

	pub := newRTCNode(t, WebRTCConfig{PublicIPs: []string{"203.0.113.7"}})
	pc := pub.s.Consumer()("cam")
	defer pc.Close()
	pc.Tracks(src.tracks())
	_, offer := offerSDP(t, media.H264)
	code, _, answer := postOffer(t, pub.whepURL("cam", time.Now().Add(time.Hour)), offer)
	if code != http.StatusCreated || !strings.Contains(answer, " 203.0.113.7 ") || strings.Contains(answer, " 127.0.0.1 ") {
		t.Errorf("answer with public_ips: %d\n%s", code, answer)
	}
}
