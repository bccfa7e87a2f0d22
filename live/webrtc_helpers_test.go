package live

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/dtls/v3"
	"github.com/pion/interceptor"
	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"
	"github.com/pion/webrtc/v4"

	"github.com/vigia/vigia/media"
	vstream "github.com/vigia/vigia/stream"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// rtcNode is a live Server with its WebRTC side behind a real HTTP server
// on loopback.
type rtcNode struct {
	s   *Server
	w   *WebRTC
	srv *httptest.Server
}

func newRTCNode(t testing.TB, cfg WebRTCConfig) *rtcNode {
	t.Helper()
	s, _ := newTestServer(t, Config{})
	if cfg.Interfaces == nil {
		cfg.Interfaces = []string{"lo"}
	}
	w, err := NewWebRTC(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /live/", s.Handler())
	w.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		w.Close()
	})
	return &rtcNode{s: s, w: w, srv: srv}
}

// session returns the node's session of viewer c.
func (n *rtcNode) session(t testing.TB, c *rtcClient) *viewer {
	t.Helper()
	v := n.w.session(c.location[strings.LastIndex(c.location, "/")+1:])
	if v == nil {
		t.Fatalf("no session at %s", c.location)
	}
	return v
}

// whepURL returns the WHEP address of camera with a token valid until exp.
func (n *rtcNode) whepURL(camera string, exp time.Time) string {
	return WHEPURL(n.srv.URL, testKeys, camera, exp)
}

// playH264 feeds camera an H.264 source, as the camera's pipeline would,
// until the test ends.
func (n *rtcNode) playH264(t *testing.T, camera string) *source {
	t.Helper()
	c := n.s.Consumer()(camera)
	t.Cleanup(func() { c.Close() })
	src := newSource(t, synth.CodecH264, true)
	c.Tracks(src.tracks())
	play(t, c, src)
	return src
}

// play feeds src's units to c at the clip's frame rate until the test
// ends.
func play(t *testing.T, c vstream.Consumer, src *source) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for {
			if !src.untilDue(ctx, src.frameTime(src.n)) {
				return
			}
			src.burst(c, 1)
		}
	}()
}

// rtcClient is a WHEP viewer built with pion: it offers to receive video
// of one codec and reassembles the frames it receives.
type rtcClient struct {
	pc       *webrtc.PeerConnection
	location string
	codec    media.Codec

	mu     sync.Mutex
	frames [][][]byte // NAL units of each frame received, in order
}

// clientAPI is the pion API of test viewers: loopback only, the codec
// given, the SRTP protection profiles given (pion's when none), nothing
// else.
func clientAPI(t testing.TB, codec media.Codec, profiles ...dtls.SRTPProtectionProfile) *webrtc.API {
	return clientAPIWith(t, codec, func(se *webrtc.SettingEngine) {
		if len(profiles) > 0 {
			se.SetSRTPProtectionProfiles(profiles...)
		}
	})
}

// clientAPIWith is clientAPI with settings of the test's own.
func clientAPIWith(t testing.TB, codec media.Codec, settings func(*webrtc.SettingEngine)) *webrtc.API {
	me := &webrtc.MediaEngine{}
	capa := webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeH264, ClockRate: 90000,
		SDPFmtpLine: "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"}
	if codec == media.H265 {
		capa = webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypeH265, ClockRate: 90000}
	}
	if err := me.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: capa, PayloadType: 96}, webrtc.RTPCodecTypeVideo); err != nil {
		t.Fatal(err)
	}
	var se webrtc.SettingEngine
	se.SetInterfaceFilter(func(n string) bool { return n == "lo" })
	se.SetIncludeLoopbackCandidate(true)
	settings(&se)
	return webrtc.NewAPI(webrtc.WithMediaEngine(me), webrtc.WithSettingEngine(se),
		webrtc.WithInterceptorRegistry(&interceptor.Registry{}))
}

// offerSDP returns a complete offer (candidates gathered) of a new peer
// connection receiving codec.
func offerSDP(t testing.TB, codec media.Codec) (*webrtc.PeerConnection, string) {
	t.Helper()
	return offerSDPWith(t, clientAPI(t, codec))
}

// offerSDPWith is offerSDP with the viewer's API.
func offerSDPWith(t testing.TB, api *webrtc.API) (*webrtc.PeerConnection, string) {
	t.Helper()
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	if _, err := pc.AddTransceiverFromKind(webrtc.RTPCodecTypeVideo,
		webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
		t.Fatal(err)
	}
	offer, err := pc.CreateOffer(nil)
	if err != nil {
		t.Fatal(err)
	}
	gathered := webrtc.GatheringCompletePromise(pc)
	if err := pc.SetLocalDescription(offer); err != nil {
		t.Fatal(err)
	}
	<-gathered
	return pc, pc.LocalDescription().SDP
}

// postOffer sends sdp to a WHEP address.
func postOffer(t testing.TB, target, sdp string) (int, string, string) {
	t.Helper()
	res, err := http.Post(target, "application/sdp", strings.NewReader(sdp))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(body)
}

// dial connects a viewer of codec to target; it fails the test unless the
// node answers 201.
func dial(t testing.TB, target string, codec media.Codec) *rtcClient {
	t.Helper()
	return dialWith(t, target, codec, clientAPI(t, codec))
}

// dialWith is dial with the viewer's API (clientAPI).
func dialWith(t testing.TB, target string, codec media.Codec, api *webrtc.API) *rtcClient {
	t.Helper()
	pc, offer := offerSDPWith(t, api)
	code, loc, body := postOffer(t, target, offer)
	if code != http.StatusCreated || loc == "" {
		t.Fatalf("WHEP POST: %d %q (Location %q)", code, body, loc)
	}
	c := &rtcClient{pc: pc, location: loc, codec: codec}
	pc.OnTrack(func(tr *webrtc.TrackRemote, _ *webrtc.RTPReceiver) { go c.read(tr) })
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: body}); err != nil {
		t.Fatalf("answer: %v\n%s", err, body)
	}
	return c
}

// read reassembles frames (by the marker bit) until the track ends.
func (c *rtcClient) read(tr *webrtc.TrackRemote) {
	var dep rtp.Depacketizer = &codecs.H264Packet{}
	if c.codec == media.H265 {
		dep = &codecs.H265Depacketizer{}
	}
	var annexb []byte
	for {
		p, _, err := tr.ReadRTP()
		if err != nil {
			return
		}
		b, err := dep.Unmarshal(p.Payload)
		if err != nil {
			continue
		}
		annexb = append(annexb, b...)
		if p.Marker {
			c.mu.Lock()
			c.frames = append(c.frames, splitAnnexB(annexb))
			c.mu.Unlock()
			annexb = nil
		}
	}
}

// received returns the frames received so far.
func (c *rtcClient) received() [][][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][][]byte(nil), c.frames...)
}

// waitFrames waits until n frames arrived.
func (c *rtcClient) waitFrames(t *testing.T, n int, timeout time.Duration) [][][]byte {
	t.Helper()
	testenv.WaitFor(t, timeout, "WebRTC frames", func() bool { return len(c.received()) >= n })
	return c.received()
}

// splitAnnexB splits a byte stream on 3- and 4-byte start codes.
func splitAnnexB(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.Index(b, []byte{0, 0, 1})
		if i < 0 {
			out = append(out, b)
			break
		}
		if i > 0 {
			n := b[:i]
			n = bytes.TrimRight(n, "\x00")
			if len(n) > 0 {
				out = append(out, n)
			}
		}
		b = b[i+3:]
	}
	return out
}

// withToken returns target with its token replaced by one of camera until
// exp.
func withToken(target, camera string, exp time.Time) string {
	u, _ := url.Parse(target)
	u.RawQuery = Token(testKeys, camera, exp).Encode()
	return u.String()
}
