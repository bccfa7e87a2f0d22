package rtsp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph264"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph265"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtpmpeg4audio"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// scriptedCamera is an RTSP server on loopback that streams the synthetic
// H.264 clip and AAC over interleaved channels of its own choosing (4 and 6,
// not the ones asked for), with the habits of real cameras: a session
// timeout, a request of its own in the middle of the stream, junk bytes
// between frames, an RTP packet larger than the client's read buffer, and
// sender reports. It records what the client sends.
type scriptedCamera struct {
	t      *testing.T
	ln     net.Listener
	setup  func(line int) string // answer to the n-th SETUP; "" for the default
	stream bool                  // send media after PLAY (else stall)
	public string
	flood  int // loops of the clip sent as fast as the client reads, each write given 5 s (0: two loops, 15 units a second)

	// A camera's own DESCRIBE answer (testdata/cameras): its SDP, headers
	// added to the answer, and the payload type and codec of the video
	// it sends.
	describe       []byte
	describeHeader base.Header
	videoPT        uint8
	h265           bool

	mu       sync.Mutex
	methods  []base.Method
	reports  int   // RTCP receiver reports received
	answered int   // answers to the camera's own request
	flooded  bool  // every loop of a flood was sent
	writeErr error // the first write that failed
}

func newScriptedCamera(t *testing.T) *scriptedCamera {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &scriptedCamera{t: t, ln: ln, stream: true, public: "OPTIONS, DESCRIBE, SETUP, PLAY, GET_PARAMETER, TEARDOWN"}
	t.Cleanup(func() { _ = ln.Close() })
	return c
}

func (c *scriptedCamera) start() {
	go func() {
		for {
			nc, err := c.ln.Accept()
			if err != nil {
				return
			}
			go c.serve(nc)
		}
	}()
}

func (c *scriptedCamera) url() string { return "rtsp://" + c.ln.Addr().String() + "/cam" }

func (c *scriptedCamera) seen() (methods []base.Method, reports, answered int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]base.Method(nil), c.methods...), c.reports, c.answered
}

func (c *scriptedCamera) count(m base.Method) int {
	ms, _, _ := c.seen()
	n := 0
	for _, x := range ms {
		if x == m {
			n++
		}
	}
	return n
}

func (c *scriptedCamera) sdp(t *testing.T, clip *synth.Clip, audio *synth.AudioClip) []byte {
	sps, pps := clip.Track().SPS, clip.Track().PPS
	desc := description.Session{Medias: []*description.Media{
		{Type: description.MediaTypeVideo, Control: "trackID=0", Formats: []format.Format{&format.H264{PayloadTyp: 96, PacketizationMode: 1, SPS: sps, PPS: pps}}},
		{Type: description.MediaTypeAudio, Control: "trackID=1", Formats: []format.Format{&format.MPEG4Audio{PayloadTyp: 97, Config: audio.Config, SizeLength: 13, IndexLength: 3, IndexDeltaLength: 3}}},
	}}
	b, err := desc.Marshal(false)
	if err != nil {
		t.Error(err)
	}
	return b
}

func (c *scriptedCamera) serve(nc net.Conn) {
	defer nc.Close()
	codec := synth.CodecH264
	if c.h265 {
		codec = synth.CodecH265
	}
	clip, err := synth.Fixture(codec, true)
	if err != nil {
		c.t.Error(err)
		return
	}
	audio, err := synth.AudioFixture()
	if err != nil {
		c.t.Error(err)
		return
	}
	br := bufio.NewReader(nc)
	var wmu sync.Mutex
	write := func(b []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		if c.flood > 0 {
			_ = nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		}
		_, err := nc.Write(b)
		if err != nil {
			c.mu.Lock()
			if c.writeErr == nil {
				c.writeErr = err
			}
			c.mu.Unlock()
		}
		return err
	}
	setups := 0
	playing := make(chan struct{})
	for {
		b, err := br.Peek(1)
		if err != nil {
			return
		}
		if b[0] == '$' { // RTCP from the client
			var fr base.InterleavedFrame
			if err := fr.Unmarshal(br); err != nil {
				return
			}
			if fr.Channel%2 == 1 && len(fr.Payload) > 1 && fr.Payload[1] == 201 {
				c.mu.Lock()
				c.reports++
				c.mu.Unlock()
			}
			continue
		}
		if b[0] == 'R' { // the answer to the camera's request
			var res base.Response
			if err := res.Unmarshal(br); err != nil {
				return
			}
			if res.StatusCode == base.StatusOK {
				c.mu.Lock()
				c.answered++
				c.mu.Unlock()
			}
			continue
		}
		var req base.Request
		if err := req.Unmarshal(br); err != nil {
			return
		}
		c.mu.Lock()
		c.methods = append(c.methods, req.Method)
		c.mu.Unlock()
		res := base.Response{StatusCode: base.StatusOK, Header: base.Header{"CSeq": req.Header["CSeq"]}}
		switch req.Method {
		case base.Options:
			res.Header["Public"] = base.HeaderValue{c.public}
		case base.Describe:
			res.Header["Content-Type"] = base.HeaderValue{"application/sdp"}
			res.Header["Content-Base"] = base.HeaderValue{c.url() + "/"}
			res.Body = c.sdp(c.t, clip, audio)
			if c.describe != nil {
				delete(res.Header, "Content-Base")
				for k, v := range c.describeHeader {
					res.Header[k] = v
				}
				res.Body = c.describe
			}
		case base.Setup:
			ans := ""
			if c.setup != nil {
				ans = c.setup(setups)
			}
			if ans == "" {
				ans = fmt.Sprintf("RTP/AVP/TCP;unicast;interleaved=%d-%d", 4+2*setups, 5+2*setups)
			}
			if ans == "461" {
				res.StatusCode = base.StatusUnsupportedTransport
			} else {
				res.Header["Transport"] = base.HeaderValue{ans}
				res.Header["Session"] = base.HeaderValue{"12345678;timeout=2"}
			}
			setups++
		case base.Play:
			res.Header["Session"] = base.HeaderValue{"12345678"}
			if c.stream {
				go c.media(write, clip, audio, playing)
			}
		case base.Teardown:
			out, _ := res.Marshal()
			_ = write(out)
			return
		}
		out, _ := res.Marshal()
		if err := write(out); err != nil {
			return
		}
		if req.Method == base.Play {
			close(playing)
		}
	}
}

// media sends the clip twice, 15 units a second, with its oddities.
func (c *scriptedCamera) media(write func([]byte) error, clip *synth.Clip, audio *synth.AudioClip, playing <-chan struct{}) {
	<-playing
	pt := c.videoPT
	if pt == 0 {
		pt = 96
	}
	var venc interface {
		Encode([][]byte) ([]*rtp.Packet, error)
	}
	if c.h265 {
		e := &rtph265.Encoder{PayloadType: pt}
		if e.Init() != nil {
			c.t.Error("h265 encoder")
			return
		}
		venc = e
	} else {
		e := &rtph264.Encoder{PayloadType: pt, PacketizationMode: 1}
		if e.Init() != nil {
			c.t.Error("h264 encoder")
			return
		}
		venc = e
	}
	aenc := &rtpmpeg4audio.Encoder{PayloadType: 97, SizeLength: 13, IndexLength: 3, IndexDeltaLength: 3}
	if aenc.Init() != nil {
		c.t.Error("encoders")
		return
	}
	frame := func(ch int, p *rtp.Packet) error {
		b, err := p.Marshal()
		if err != nil {
			return err
		}
		out, _ := base.InterleavedFrame{Channel: ch, Payload: b}.Marshal()
		return write(out)
	}
	ai := 0
	var vseq uint16
	loops := 2
	if c.flood > 0 {
		loops = c.flood
	}
	for loop := range loops {
		for i, u := range clip.Units {
			n := loop*len(clip.Units) + i
			ts := uint32(n * 6000)
			var pkts []*rtp.Packet
			if n == 1 && !c.h265 {
				// One packet of 20 KB (a single NAL unit packet larger than
				// the client's read buffer).
				nalu := append([]byte{0x01}, bytes.Repeat([]byte{0x42}, 20<<10)...)
				nalu = append(u.NALUs[0][:1:1], nalu[1:]...)
				pkts = []*rtp.Packet{{Header: rtp.Header{Version: 2, PayloadType: pt, Marker: true}, Payload: nalu}}
			} else {
				var err error
				if pkts, err = venc.Encode(u.NALUs); err != nil {
					c.t.Error(err)
					return
				}
			}
			for _, p := range pkts {
				p.Timestamp, p.SequenceNumber = ts, vseq
				vseq++
				if frame(4, p) != nil {
					return
				}
			}
			// Audio up to this frame's time (44.1 or 48 kHz, 1024 a frame).
			for ; float64(ai*1024)/float64(audio.SampleRate()) < float64(n)/15; ai++ {
				ap, err := aenc.Encode([][]byte{audio.Units[ai%len(audio.Units)].Payload})
				if err != nil {
					c.t.Error(err)
					return
				}
				for _, p := range ap {
					p.Timestamp = uint32(ai * 1024)
					if frame(6, p) != nil {
						return
					}
				}
			}
			switch n {
			case 3: // junk, then a request of the camera's own
				if write([]byte("\x00\x17junk")) != nil {
					return
				}
				if write([]byte("GET_PARAMETER rtsp://cam RTSP/1.0\r\nCSeq: 1\r\n\r\n")) != nil {
					return
				}
			case 5: // a sender report on the video's RTCP channel
				sr := []byte{0x80, 200, 0, 6, 1, 2, 3, 4, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
				out, _ := base.InterleavedFrame{Channel: 5, Payload: sr}.Marshal()
				if write(out) != nil {
					return
				}
			}
			if c.flood == 0 {
				time.Sleep(time.Second / 15)
			}
		}
	}
	c.mu.Lock()
	c.flooded = true
	c.mu.Unlock()
}

// unitSink collects units.
type unitSink struct {
	mu     sync.Mutex
	tracks []*media.Track
	units  []*media.Unit
}

func (s *unitSink) Tracks(t []*media.Track) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tracks = t
	return nil
}

func (s *unitSink) Unit(u *media.Unit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.units = append(s.units, u)
}

func (s *unitSink) byTrack(track int) []*media.Unit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*media.Unit
	for _, u := range s.units {
		if u.Track == track {
			out = append(out, u)
		}
	}
	return out
}

func scriptedSource(cam *scriptedCamera, readTimeout time.Duration) *Source {
	s := New(ingest.Camera{ID: "c", URL: cam.url(), Sound: true}, ingest.SourceConfig{ReadTimeout: readTimeout}, nil)
	s.allowed = onlyHost(cam.ln.Addr().String())
	s.reportEvery = 300 * time.Millisecond
	return s
}

// TestSessionPlaysAScriptedCamera: the lean TCP client delivers every video
// and audio unit of the stream, byte for byte, through the camera's own
// channel numbers, junk bytes, a request of the camera's (answered), an RTP
// packet larger than its read buffer and sender reports; it sends
// GET_PARAMETER keepalives within the session timeout and receiver
// reports, and TEARDOWN when stopped.
func TestSessionPlaysAScriptedCamera(t *testing.T) {
	cam := newScriptedCamera(t)
	cam.start()
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	audio, err := synth.AudioFixture()
	if err != nil {
		t.Fatal(err)
	}
	s := scriptedSource(cam, 5*time.Second)
	sink := &unitSink{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, sink) }()

	total := 2 * len(clip.Units)
	testenv.WaitFor(t, 30*time.Second, "every video unit", func() bool { return len(sink.byTrack(0)) >= total-1 })
	testenv.WaitFor(t, 10*time.Second, "a keepalive and receiver reports", func() bool {
		_, reports, answered := cam.seen()
		return cam.count(base.GetParameter) > 0 && reports > 1 && answered == 1
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("run ended with %v, want context.Canceled", err)
	}
	testenv.WaitFor(t, 5*time.Second, "TEARDOWN", func() bool { return cam.count(base.Teardown) == 1 })

	video := sink.byTrack(0)
	for i, u := range video {
		n := i
		if n == 0 {
			if !u.Key {
				t.Fatal("first unit is not a keyframe")
			}
		}
		want := clip.Units[n%len(clip.Units)].NALUs
		if n == 1 {
			want = [][]byte{append(want[0][:1:1], bytes.Repeat([]byte{0x42}, 20<<10)...)}
		}
		got := u.NALUs
		// Parameter sets may be put in front of a keyframe.
		if len(got) > len(want) {
			got = got[len(got)-len(want):]
		}
		for j := range want {
			if !bytes.Equal(got[j], want[j]) {
				t.Fatalf("video unit %d nal unit %d differs", i, j)
			}
		}
		if i > 0 && u.DTS <= video[i-1].DTS {
			t.Fatalf("video unit %d: DTS %v after %v", i, u.DTS, video[i-1].DTS)
		}
	}
	aud := sink.byTrack(1)
	if len(aud) < 10 {
		t.Fatalf("%d audio units", len(aud))
	}
	var first int
	for first = range audio.Units {
		if bytes.Equal(audio.Units[first].Payload, aud[0].Payload) {
			break
		}
	}
	for i, u := range aud {
		if !bytes.Equal(u.Payload, audio.Units[(first+i)%len(audio.Units)].Payload) {
			t.Fatalf("audio unit %d differs", i)
		}
	}
}

// TestSessionStalledCamera: a camera that answers PLAY and then sends
// nothing is given up after the read timeout.
func TestSessionStalledCamera(t *testing.T) {
	cam := newScriptedCamera(t)
	cam.stream = false
	cam.start()
	s := scriptedSource(cam, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Run(ctx, &unitSink{}); !errors.Is(err, ingest.ErrReadTimeout) {
		t.Fatalf("run ended with %v, want %v", err, ingest.ErrReadTimeout)
	}
}

// TestSessionSetupRefusals: a camera that refuses TCP, or answers with a
// transport the client cannot use, is reported as such.
func TestSessionSetupRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string
		want   error
	}{
		{"no rtp over tcp", "461", errNotTCP},
		{"udp answered", "RTP/AVP;unicast;client_port=5000-5001;server_port=6000-6001", errNotTCP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cam := newScriptedCamera(t)
			cam.setup = func(int) string { return tc.answer }
			cam.start()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := scriptedSource(cam, 2*time.Second).Run(ctx, &unitSink{}); !errors.Is(err, tc.want) {
				t.Fatalf("run ended with %v, want %v", err, tc.want)
			}
		})
	}
}

// TestSessionKeepaliveOptions: a camera that does not list GET_PARAMETER
// gets OPTIONS as keepalives.
func TestSessionKeepaliveOptions(t *testing.T) {
	cam := newScriptedCamera(t)
	cam.public = "OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN"
	cam.start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- scriptedSource(cam, 5*time.Second).Run(ctx, &unitSink{}) }()
	testenv.WaitFor(t, 10*time.Second, "an OPTIONS keepalive", func() bool { return cam.count(base.Options) >= 2 })
	cancel()
	<-done
	if n := cam.count(base.GetParameter); n != 0 {
		t.Errorf("%d GET_PARAMETER sent to a camera that does not list it", n)
	}
}

// TestVideoTrackLoss: after a lost packet, the units that refer to what
// was lost are dropped up to the next keyframe, which carries a gap so
// that recordings close there; the loss is counted once.
func TestVideoTrackLoss(t *testing.T) {
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	gop := clip.GOP()
	sink := &unitSink{}
	r, _ := videoReader(t, &format.H264{PayloadTyp: 96, PacketizationMode: 1}, sink, bytes.NewReader(nil))
	errs := 0
	r.onDecodeError = func(error) { errs++ }
	enc := &rtph264.Encoder{PayloadType: 96, PacketizationMode: 1, PayloadMaxSize: 300}
	if err := enc.Init(); err != nil {
		t.Fatal(err)
	}
	const lossAt = 3
	now := time.Now()
	for i := range gop + 3 {
		pkts, err := enc.Encode(clip.Units[i%len(clip.Units)].NALUs)
		if err != nil {
			t.Fatal(err)
		}
		for j, p := range pkts {
			if i == lossAt && j == 1 {
				continue
			}
			p.Timestamp = uint32(i * 6000)
			b, _ := p.Marshal()
			rp, err := parseRTP(b)
			if err != nil {
				t.Fatal(err)
			}
			r.handlers[0].packet(&rp, now.Add(time.Duration(i)*time.Second/15))
		}
	}
	got := sink.byTrack(0)
	if len(got) != lossAt+3 {
		t.Fatalf("%d units delivered, want %d (the units before the loss, then the next GOP's first three)", len(got), lossAt+3)
	}
	for i, u := range got {
		wantGap := i == lossAt
		if u.Gap != wantGap {
			t.Errorf("unit %d: gap %v, want %v", i, u.Gap, wantGap)
		}
	}
	if !got[lossAt].Key {
		t.Error("the unit after the loss is not a keyframe")
	}
	if errs != 1 {
		t.Errorf("%d decode errors, want 1", errs)
	}
}

// stuckSink keeps the ingest.Sink contract (Unit never waits) in front of
// a consumer that is stuck until open is closed, as the recorder's
// pipeline does in front of a slow disk: units past its queue are dropped
// and counted.
type stuckSink struct {
	unitSink
	queue chan *media.Unit
	open  chan struct{}
	drops atomic.Int64
}

func newStuckSink() *stuckSink {
	s := &stuckSink{queue: make(chan *media.Unit, 64), open: make(chan struct{})}
	go func() {
		<-s.open
		for u := range s.queue {
			s.unitSink.Unit(u)
		}
	}()
	return s
}

func (s *stuckSink) Unit(u *media.Unit) {
	select {
	case s.queue <- u:
	default:
		s.drops.Add(1)
	}
}

// TestSessionReadsOnWhileTheSinkIsStuck: the session waits on nothing but
// the camera: with the consumer behind the sink stuck, the camera sends
// about 26 MB as fast as it can, each write given 5 s, and every write goes
// through (the camera never has to drop anything, however many requests it
// sends meanwhile); the units that could not be taken are dropped on this
// side. Once the consumer is free again, units reach it.
func TestSessionReadsOnWhileTheSinkIsStuck(t *testing.T) {
	cam := newScriptedCamera(t)
	cam.flood = 60
	cam.start()
	s := scriptedSource(cam, 5*time.Second)
	sink := newStuckSink()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, sink) }()
	var opened bool
	defer func() {
		if !opened {
			close(sink.open)
		}
		cancel()
		<-done
	}()
	testenv.WaitFor(t, 120*time.Second, "the camera to send every loop, or fail a write", func() bool {
		cam.mu.Lock()
		defer cam.mu.Unlock()
		return cam.flooded || cam.writeErr != nil
	})
	cam.mu.Lock()
	werr := cam.writeErr
	cam.mu.Unlock()
	if werr != nil {
		t.Fatalf("the camera could not send: %v (the client stopped reading)", werr)
	}
	if sink.drops.Load() == 0 {
		t.Fatal("no unit dropped while the consumer was stuck: the flood did not fill the queue")
	}
	opened = true
	close(sink.open)
	testenv.WaitFor(t, 10*time.Second, "units once the consumer is free", func() bool { return len(sink.byTrack(0)) > 0 })
	t.Logf("%d units dropped while the consumer was stuck", sink.drops.Load())
}
