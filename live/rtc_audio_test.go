package live

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pion/interceptor"
	"github.com/pion/rtcp"
	"github.com/pion/webrtc/v4"
	dto "github.com/prometheus/client_model/go"

	"github.com/vigia/vigia/audio"
	"github.com/vigia/vigia/audio/transcode"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// avClient is a WHEP viewer (pion) offering H.264 and, optionally, Opus:
// it notes when each RTP packet arrived and the sender reports of each
// SSRC.
type avClient struct {
	pc       *webrtc.PeerConnection
	location string

	mu      sync.Mutex
	arrived map[string][]arrival // by kind: "audio", "video"
	ssrc    map[string]uint32
	reports map[uint32][]rtcp.SenderReport
}

type arrival struct {
	at      time.Time
	ts      uint32
	pt      uint8
	payload []byte
}

func dialAV(t *testing.T, target string, withAudio bool, audioCodecs ...webrtc.RTPCodecParameters) (*avClient, int, string) {
	t.Helper()
	me := &webrtc.MediaEngine{}
	if err := me.RegisterCodec(webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{
		MimeType: webrtc.MimeTypeH264, ClockRate: 90000,
		SDPFmtpLine: "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f"}, PayloadType: 96},
		webrtc.RTPCodecTypeVideo); err != nil {
		t.Fatal(err)
	}
	if audioCodecs == nil {
		audioCodecs = []webrtc.RTPCodecParameters{{RTPCodecCapability: opusCapability, PayloadType: 109}}
	}
	for _, c := range audioCodecs {
		if err := me.RegisterCodec(c, webrtc.RTPCodecTypeAudio); err != nil {
			t.Fatal(err)
		}
	}
	var se webrtc.SettingEngine
	se.SetInterfaceFilter(func(n string) bool { return n == "lo" })
	se.SetIncludeLoopbackCandidate(true)
	api := webrtc.NewAPI(webrtc.WithMediaEngine(me), webrtc.WithSettingEngine(se),
		webrtc.WithInterceptorRegistry(&interceptor.Registry{}))
	pc, err := api.NewPeerConnection(webrtc.Configuration{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	kinds := []webrtc.RTPCodecType{webrtc.RTPCodecTypeVideo}
	if withAudio {
		kinds = append(kinds, webrtc.RTPCodecTypeAudio)
	}
	for _, k := range kinds {
		if _, err := pc.AddTransceiverFromKind(k, webrtc.RTPTransceiverInit{Direction: webrtc.RTPTransceiverDirectionRecvonly}); err != nil {
			t.Fatal(err)
		}
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
	code, loc, body := postOffer(t, target, pc.LocalDescription().SDP)
	if code != http.StatusCreated {
		return nil, code, body
	}
	c := &avClient{pc: pc, location: loc, arrived: map[string][]arrival{}, ssrc: map[string]uint32{},
		reports: map[uint32][]rtcp.SenderReport{}}
	pc.OnTrack(func(tr *webrtc.TrackRemote, r *webrtc.RTPReceiver) {
		kind := tr.Kind().String()
		c.mu.Lock()
		c.ssrc[kind] = uint32(tr.SSRC())
		c.mu.Unlock()
		go func() {
			for {
				p, _, err := tr.ReadRTP()
				if err != nil {
					return
				}
				c.mu.Lock()
				c.arrived[kind] = append(c.arrived[kind], arrival{at: time.Now(), ts: p.Timestamp, pt: p.PayloadType,
					payload: slices.Clone(p.Payload)})
				c.mu.Unlock()
			}
		}()
		go func() {
			for {
				pkts, _, err := r.ReadRTCP()
				if err != nil {
					return
				}
				c.mu.Lock()
				for _, p := range pkts {
					if sr, ok := p.(*rtcp.SenderReport); ok {
						c.reports[sr.SSRC] = append(c.reports[sr.SSRC], *sr)
					}
				}
				c.mu.Unlock()
			}
		}()
	})
	if err := pc.SetRemoteDescription(webrtc.SessionDescription{Type: webrtc.SDPTypeAnswer, SDP: body}); err != nil {
		t.Fatalf("answer: %v\n%s", err, body)
	}
	return c, code, body
}

// count returns the packets of kind received and the sender reports of
// its SSRC.
func (c *avClient) count(kind string) (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.arrived[kind]), len(c.reports[c.ssrc[kind]])
}

// offsets returns, for each packet of kind, its arrival time minus the
// wall-clock time of its RTP timestamp by the last sender report of its
// SSRC.
func (c *avClient) offsets(kind string, clock int) []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	srs := c.reports[c.ssrc[kind]]
	sr := srs[len(srs)-1]
	base := media.NTPToTime(sr.NTPTime)
	var out []time.Duration
	for _, a := range c.arrived[kind] {
		at := base.Add(time.Duration(int32(a.ts-sr.RTPTime)) * time.Second / time.Duration(clock))
		out = append(out, a.at.Sub(at))
	}
	return out
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// heldBack is how much later than the least delayed the median packets
// of each track arrived, added: what this run's machine (its load, -race)
// added to the delivery of packets on their way, by which a comparison of
// the tracks' arrivals is widened (a few ms on an idle machine, plus the
// transcoder's framing for Opus).
func heldBack(tracks ...[]time.Duration) time.Duration {
	var d time.Duration
	for _, t := range tracks {
		d += median(t) - slices.Min(t)
	}
	return d
}

// TestWebRTCAudio: a camera with AAC audio is heard by a WebRTC viewer
// whose offer takes Opus: 20 ms Opus packets, RTP timestamps 960 apart,
// and sender reports of the audio and the video on one clock, by which
// the audio of a time and the video of the same time map to the same
// wall-clock time (within the transcoder's framing). One transcoder serves
// every listener of a camera and stops with the last; a viewer that
// offers no audio gets none and starts no transcoder.
func TestWebRTCAudio(t *testing.T) {
	if !transcode.Available() {
		t.Skip("built without cgo")
	}
	n := newRTCNode(t, WebRTCConfig{})
	c := n.s.Consumer()("cam")
	t.Cleanup(func() { c.Close() })
	src := newSource(t, synth.CodecH264, true).withAudio()
	c.Tracks(src.tracks())
	play(t, c, src)
	target := n.whepURL("cam", time.Now().Add(time.Hour))

	mute, code, body := dialAV(t, target, false)
	if code != http.StatusCreated {
		t.Fatalf("WHEP POST without audio: %d %s", code, body)
	}
	if sendsAudio(body) || n.w.atc.running.Load() != 0 {
		t.Fatalf("a viewer offering no audio got Opus (%d transcoders)", n.w.atc.running.Load())
	}
	a, code, body := dialAV(t, target, true)
	if code != http.StatusCreated {
		t.Fatalf("WHEP POST: %d %s", code, body)
	}
	if !sendsAudio(body) {
		t.Fatalf("answer sends no Opus:\n%s", body)
	}
	b, code, _ := dialAV(t, target, true)
	if code != http.StatusCreated {
		t.Fatalf("second listener: %d", code)
	}
	if got := n.w.atc.running.Load(); got != 1 {
		t.Fatalf("%d audio transcoders for one camera, want 1", got)
	}
	testenv.WaitFor(t, 20*time.Second, "audio, video and two sender reports of each", func() bool {
		for _, cl := range []*avClient{a, b} {
			na, ra := cl.count("audio")
			nv, rv := cl.count("video")
			if na < 100 || nv < 30 || ra < 2 || rv < 2 {
				return false
			}
		}
		return true
	})
	if na, _ := mute.count("audio"); na != 0 {
		t.Errorf("the viewer without audio received %d audio packets", na)
	}

	a.mu.Lock()
	pkts := slices.Clone(a.arrived["audio"])
	a.mu.Unlock()
	for i, p := range pkts {
		if n, err := audio.OpusSamples(p.payload); err != nil || n != 960 {
			t.Fatalf("audio packet %d: %d samples, %v", i, n, err)
		}
		if p.pt != 109 {
			t.Fatalf("audio packet %d: payload type %d, want the offer's 109", i, p.pt)
		}
		if i > 0 && p.ts-pkts[i-1].ts != 960 {
			t.Fatalf("audio packet %d: timestamp %d after %d, want 960 more", i, p.ts, pkts[i-1].ts)
		}
	}
	// The source feeds each AAC frame (64 ms at 16 kHz) at its time and
	// the video at its own: by the sender reports, audio arrives no later
	// than video of its time and at most an AAC frame and an Opus frame
	// (and the lookahead) earlier.
	// On a loaded machine (or under -race) packets arrive later than they
	// were sent by what the run held them back: the window is widened by
	// that, measured in the run itself.
	ao, vo := a.offsets("audio", 48000), a.offsets("video", 90000)
	av, vv, held := median(ao), median(vo), heldBack(ao, vo)
	if d := av - vv; d > 90*time.Millisecond+held || d < -60*time.Millisecond-held {
		t.Errorf("audio arrives %v after its time, video %v: the reports map them %v apart, want within [-60 ms, 90 ms] widened by %v held back",
			av, vv, d, held)
	}
	t.Logf("arrival after the sender reports' time: audio %v, video %v (%v held back)", av, vv, held)

	// The last listener leaving stops the transcoder.
	for _, cl := range []*avClient{a, b} {
		req, _ := http.NewRequest(http.MethodDelete, n.srv.URL+cl.location, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	testenv.WaitFor(t, 5*time.Second, "the audio transcoder to stop", func() bool { return n.w.atc.running.Load() == 0 })
}

// TestWebRTCAudioBound: past AudioTranscodeMax a viewer gets the video
// without sound, counted; a camera without audio gets no audio track.
func TestWebRTCAudioBound(t *testing.T) {
	if !transcode.Available() {
		t.Skip("built without cgo")
	}
	n := newRTCNode(t, WebRTCConfig{AudioTranscodeMax: 1})
	for _, cam := range []string{"one", "two"} {
		c := n.s.Consumer()(cam)
		t.Cleanup(func() { c.Close() })
		src := newSource(t, synth.CodecH264, true).withAudio()
		c.Tracks(src.tracks())
		play(t, c, src)
	}
	silent := n.s.Consumer()("silent")
	t.Cleanup(func() { silent.Close() })
	src := newSource(t, synth.CodecH264, true)
	silent.Tracks(src.tracks())
	play(t, silent, src)

	exp := time.Now().Add(time.Hour)
	for _, tc := range []struct {
		camera string
		opus   bool
	}{{"one", true}, {"two", false}, {"silent", false}} {
		_, code, body := dialAV(t, n.whepURL(tc.camera, exp), true)
		if code != http.StatusCreated {
			t.Fatalf("%s: %d %s", tc.camera, code, body)
		}
		if got := sendsAudio(body); got != tc.opus {
			t.Errorf("%s: audio sent %v, want %v", tc.camera, got, tc.opus)
		}
	}
	var m dto.Metric
	if err := n.w.atc.refused.Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != 1 {
		t.Errorf("refused %v, want 1", got)
	}
}

// sendsAudio reports whether an answer's audio section sends Opus (or the
// codec named).
func sendsAudio(answer string, codec ...string) bool {
	want := "opus/48000/2"
	if len(codec) > 0 {
		want = codec[0]
	}
	for _, sec := range strings.Split(answer, "\nm=")[1:] {
		if strings.HasPrefix(sec, "audio ") {
			return strings.Contains(strings.ToLower(sec), strings.ToLower(want)) && strings.Contains(sec, "a=sendonly")
		}
	}
	return false
}

// TestWebRTCG711: a camera whose G.711 the recorder makes AAC is heard as
// G.711, as the camera sent it, by a viewer whose offer takes it (no
// transcoder runs), and as Opus by one whose offer does not. The G.711
// comes 0.3 s before the video of its time, as the recorder holds the
// video for its AAC: the node sends it with the video of its time.
func TestWebRTCG711(t *testing.T) {
	if !transcode.Available() {
		t.Skip("built without cgo")
	}
	n := newRTCNode(t, WebRTCConfig{})
	c := n.s.Consumer()("cam")
	t.Cleanup(func() { c.Close() })
	src := newSource(t, synth.CodecH264, true).withAudio() // the AAC the recorder made
	g711 := &media.Track{Codec: media.G711U, ClockRate: 8000, Channels: 1}
	tap := n.s.SourceAudio("cam", g711)
	if tap == nil {
		t.Fatal("no tap for the camera's G.711")
	}
	c.Tracks(src.tracks())
	play(t, c, src)
	// The camera's G.711: units of 60 ms (as ingest gathers them), each
	// 20 ms of it a count, sent when the unit's last sample is due, 0.3 s
	// before the video of its time (on the video's clock, src.start).
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	t.Cleanup(func() { cancel(); <-stopped })
	go func() {
		defer close(stopped)
		for i := 0; ; i += 3 {
			if !src.untilDue(ctx, time.Duration(i+3)*20*time.Millisecond) {
				return
			}
			p := make([]byte, 480)
			for j := range p {
				p[j] = byte(i + j/160)
			}
			pts := time.Duration(i)*20*time.Millisecond + 300*time.Millisecond
			tap(&media.Unit{Track: 1, PTS: pts, DTS: pts, Payload: p})
		}
	}()
	target := n.whepURL("cam", time.Now().Add(time.Hour))
	pcmu := webrtc.RTPCodecParameters{RTPCodecCapability: webrtc.RTPCodecCapability{MimeType: webrtc.MimeTypePCMU, ClockRate: 8000}, PayloadType: 0}
	g, code, body := dialAV(t, target, true, pcmu, webrtc.RTPCodecParameters{RTPCodecCapability: opusCapability, PayloadType: 109})
	if code != http.StatusCreated || !sendsAudio(body, "PCMU/8000") {
		t.Fatalf("offer with PCMU: %d, answer:\n%s", code, body)
	}
	if got := n.w.atc.running.Load(); got != 0 {
		t.Errorf("%d audio transcoders for a viewer of G.711", got)
	}
	o, code, body := dialAV(t, target, true)
	if code != http.StatusCreated || !sendsAudio(body) {
		t.Fatalf("offer with Opus only: %d, answer:\n%s", code, body)
	}
	testenv.WaitFor(t, 20*time.Second, "G.711 and Opus packets", func() bool {
		ng, _ := g.count("audio")
		no, _ := o.count("audio")
		return ng >= 50 && no >= 50
	})
	testenv.WaitFor(t, 10*time.Second, "sender reports", func() bool {
		_, ra := g.count("audio")
		_, rv := g.count("video")
		return ra >= 1 && rv >= 1
	})
	ao, vo := g.offsets("audio", 8000), g.offsets("video", 90000)
	av, vv, held := median(ao), median(vo), heldBack(ao, vo)
	if d := av - vv; d < -40*time.Millisecond-held || d > 60*time.Millisecond+held {
		t.Errorf("G.711 arrives %v after its time, video %v: want them together (within [-40 ms, 60 ms] widened by %v held back)", av, vv, held)
	}
	t.Logf("arrival after the sender reports' time: G.711 %v, video %v (%v held back)", av, vv, held)
	g.mu.Lock()
	pkts := slices.Clone(g.arrived["audio"])
	g.mu.Unlock()
	for i, p := range pkts {
		if p.pt != 0 || len(p.payload) != 160 || slices.ContainsFunc(p.payload, func(b byte) bool { return b != p.payload[0] }) {
			t.Fatalf("G.711 packet %d: payload type %d, %d bytes, not one of the camera's", i, p.pt, len(p.payload))
		}
		if i > 0 && (p.ts-pkts[i-1].ts != 160 || p.payload[0] != pkts[i-1].payload[0]+1) {
			t.Fatalf("G.711 packet %d: timestamp %d after %d, payload %d after %d: want the camera's next", i,
				p.ts, pkts[i-1].ts, p.payload[0], pkts[i-1].payload[0])
		}
	}
}
