package synth

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/headers"
	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/rtsp"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

// startFleet starts a fleet on a free loopback port, closed at test end.
func startFleet(t *testing.T, cfg FleetConfig) *Fleet {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	cfg.Log = zaptest.NewLogger(t)
	f := NewFleet(cfg)
	if err := f.Start(); err != nil {
		t.Fatalf("start fleet: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

// TestFleetGortsplibReader reads fleet cameras with gortsplib's client for
// more than a loop of the clip: every access unit is the mark of the next
// frame index, then the next unit of the fixture, byte for byte, with
// timestamps one frame apart across the loop, audio one AAC frame apart,
// and sender reports.
func TestFleetGortsplibReader(t *testing.T) {
	t.Parallel()
	f := startFleet(t, FleetConfig{Cameras: 2, Codec: "mixed", Audio: true})
	for i, codec := range []string{CodecH265, CodecH264} { // cam-1, cam-2
		t.Run(codec, func(t *testing.T) {
			t.Parallel()
			r, err := dialReader(f.URL(i+1), "", "", false)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer r.close()
			clip, err := Fixture(codec, false)
			if err != nil {
				t.Fatal(err)
			}
			loop := len(clip.Units)
			unmark := func(au videoAU) (uint64, [][]byte) {
				if len(au.nalus) == 0 {
					return 0, nil
				}
				idx, ok := FrameMark(au.nalus[0])
				if !ok {
					t.Fatalf("access unit without the mark first")
				}
				return idx, au.nalus[1:]
			}
			first := func(aus []videoAU) int {
				for i, au := range aus {
					_, nalus := unmark(au)
					if k := matchUnit(clip, nalus); k >= 0 && clip.Units[k].Key {
						return i
					}
				}
				return -1
			}
			testenv.WaitFor(t, 20*time.Second, "a keyframe and more than a loop of the clip", func() bool {
				aus := r.videoUnits()
				i := first(aus)
				return i >= 0 && len(aus)-i > loop+5
			})
			aus := r.videoUnits()
			start := first(aus)
			idx0, nalus := unmark(aus[start])
			want := matchUnit(clip, nalus)
			looped := false
			for i := start; i < len(aus); i++ {
				idx, nalus := unmark(aus[i])
				if idx != idx0+uint64(i-start) {
					t.Fatalf("unit %d has mark %d, want %d", i, idx, idx0+uint64(i-start))
				}
				k := matchUnit(clip, nalus)
				if k != want {
					t.Fatalf("unit %d is fixture unit %d, want %d", i, k, want)
				}
				if i > start {
					if d := aus[i].pts - aus[i-1].pts; d != 6000 {
						t.Fatalf("unit %d: PTS step %d, want 6000", i, d)
					}
					if d := aus[i].ts - aus[i-1].ts; d != 6000 {
						t.Fatalf("unit %d: RTP timestamp step %d, want 6000", i, d)
					}
				}
				looped = looped || (k == 0 && i > start)
				want = (want + 1) % loop
			}
			if !looped {
				t.Fatal("the clip did not loop while read")
			}
			testenv.WaitFor(t, 10*time.Second, "audio frames and a sender report", func() bool {
				_, a, _, reports := r.counts()
				return a >= 10 && reports > 0
			})
			r.mu.Lock()
			pts := append([]int64(nil), r.audioPTS...)
			r.mu.Unlock()
			for i := 1; i < len(pts); i++ {
				if d := pts[i] - pts[i-1]; d != 1024 {
					t.Fatalf("audio frame %d: PTS step %d, want 1024", i, d)
				}
			}
			if _, _, errs, _ := r.counts(); errs != 0 {
				t.Errorf("%d decode errors", errs)
			}
		})
	}
}

// unitSink collects what an ingest source delivers.
type unitSink struct {
	mu     sync.Mutex
	tracks []*media.Track
	video  []time.Duration // DTS of video units
	keys   []bool
	audio  int
}

func (s *unitSink) Tracks(tracks []*media.Track) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tracks = tracks
	return nil
}

func (s *unitSink) Unit(u *media.Unit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tracks[u.Track].Codec.IsVideo() {
		s.video = append(s.video, u.DTS)
		s.keys = append(s.keys, u.Key)
	} else {
		s.audio++
	}
	u.Release()
}

// TestFleetLeanClient reads a fleet camera with the recorder's own RTSP
// source: H.265 video from a keyframe on, one frame interval apart, and
// AAC.
func TestFleetLeanClient(t *testing.T) {
	t.Parallel()
	f := startFleet(t, FleetConfig{Cameras: 1, Codec: CodecH265, Audio: true})
	src := rtsp.New(ingest.Camera{ID: "cam-1", URL: f.URL(1), Sound: true, Trusted: true},
		ingest.SourceConfig{ReadTimeout: 5 * time.Second}, zaptest.NewLogger(t))
	var decodeErrs sync.Map
	src.OnDecodeError = func(err error) { decodeErrs.Store(err.Error(), true) }
	sink := &unitSink{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, sink) }()
	testenv.WaitFor(t, 15*time.Second, "20 video units and audio", func() bool {
		sink.mu.Lock()
		defer sink.mu.Unlock()
		return len(sink.video) >= 20 && sink.audio >= 10
	})
	cancel()
	if err := <-done; err != nil && err != context.Canceled {
		t.Fatalf("source ended with %v", err)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.tracks) != 2 || sink.tracks[0].Codec != media.H265 || sink.tracks[1].Codec != media.AAC {
		t.Fatalf("tracks %v, want H.265 and AAC", sink.tracks)
	}
	if !sink.keys[0] {
		t.Error("the first video unit is not a keyframe")
	}
	for i := 1; i < len(sink.video); i++ {
		if d := sink.video[i] - sink.video[i-1]; d < 66*time.Millisecond || d > 67*time.Millisecond {
			t.Fatalf("video unit %d: DTS step %v, want 1/15 s", i, d)
		}
	}
	decodeErrs.Range(func(k, _ any) bool {
		t.Errorf("decode error: %v", k)
		return true
	})
}

// rawClient speaks RTSP to a fleet camera by hand and reads the
// interleaved frames as they come on the wire.
type rawClient struct {
	t    *testing.T
	nc   net.Conn
	br   *bufio.Reader
	url  string
	cseq int
	sess string
	ssrc map[int]uint32 // by RTP channel, from the SETUP answers
}

func dialRaw(t *testing.T, url string) *rawClient {
	t.Helper()
	u, err := base.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return &rawClient{t: t, nc: nc, br: bufio.NewReader(nc), url: url, ssrc: map[int]uint32{}}
}

// frame is an interleaved frame read by a rawClient.
type frame struct {
	channel int
	payload []byte
}

// request sends a request and returns its answer, keeping the interleaved
// frames read on the way in frames; it fails the test on an error.
func (c *rawClient) request(method base.Method, url string, h base.Header, frames *[]frame) *base.Response {
	c.t.Helper()
	res, err := c.do(method, url, h, frames)
	if err != nil {
		c.t.Fatal(err)
	}
	return res
}

// do sends a request and returns its answer, keeping the interleaved
// frames read on the way in frames.
func (c *rawClient) do(method base.Method, url string, h base.Header, frames *[]frame) (*base.Response, error) {
	c.cseq++
	if h == nil {
		h = base.Header{}
	}
	h["CSeq"] = base.HeaderValue{strconv.Itoa(c.cseq)}
	if c.sess != "" {
		h["Session"] = base.HeaderValue{c.sess}
	}
	u, err := base.ParseURL(url)
	if err != nil {
		return nil, err
	}
	b, err := (&base.Request{Method: method, URL: u, Header: h}).Marshal()
	if err != nil {
		return nil, err
	}
	if _, err := c.nc.Write(b); err != nil {
		return nil, err
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		fr, res, err := c.next()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if res == nil {
			if frames != nil {
				*frames = append(*frames, fr)
			}
			continue
		}
		if v := res.Header["CSeq"]; len(v) != 1 || v[0] != strconv.Itoa(c.cseq) {
			return nil, fmt.Errorf("%s: answer with CSeq %v, want %d", method, v, c.cseq)
		}
		if v, ok := res.Header["Session"]; ok && c.sess == "" {
			var sx headers.Session
			if err := sx.Unmarshal(v); err != nil {
				return nil, err
			}
			c.sess = sx.Session
		}
		return res, nil
	}
}

// next reads an interleaved frame or a response.
func (c *rawClient) next() (frame, *base.Response, error) {
	b, err := c.br.Peek(1)
	if err != nil {
		return frame{}, nil, err
	}
	if b[0] != '$' {
		var res base.Response
		if err := res.Unmarshal(c.br); err != nil {
			return frame{}, nil, err
		}
		return frame{}, &res, nil
	}
	var h [4]byte
	if _, err := io.ReadFull(c.br, h[:]); err != nil {
		return frame{}, nil, err
	}
	p := make([]byte, int(h[2])<<8|int(h[3]))
	if _, err := io.ReadFull(c.br, p); err != nil {
		return frame{}, nil, err
	}
	return frame{channel: int(h[1]), payload: p}, nil, nil
}

// play sets up the video track (on channel video) and, when audio >= 0,
// the audio track, then plays.
func (c *rawClient) play(video, audio int) {
	c.t.Helper()
	if res := c.request(base.Options, c.url, nil, nil); res.StatusCode != base.StatusOK ||
		!strings.Contains(strings.Join(res.Header["Public"], ","), "GET_PARAMETER") {
		c.t.Fatalf("OPTIONS: %v %v", res.StatusCode, res.Header["Public"])
	}
	res := c.request(base.Describe, c.url, nil, nil)
	if res.StatusCode != base.StatusOK || len(res.Body) == 0 {
		c.t.Fatalf("DESCRIBE: %v", res.StatusCode)
	}
	setup := func(track, ch int) {
		th := headers.Transport{Protocol: headers.TransportProtocolTCP, InterleavedIDs: &[2]int{ch, ch + 1}}
		res := c.request(base.Setup, c.url+"/trackID="+strconv.Itoa(track), base.Header{"Transport": th.Marshal()}, nil)
		if res.StatusCode != base.StatusOK {
			c.t.Fatalf("SETUP track %d: %v", track, res.StatusCode)
		}
		var tr headers.Transport
		if err := tr.Unmarshal(res.Header["Transport"]); err != nil || tr.SSRC == nil {
			c.t.Fatalf("SETUP transport %v: %v", res.Header["Transport"], err)
		}
		c.ssrc[ch] = *tr.SSRC
	}
	setup(0, video)
	if audio >= 0 {
		setup(1, audio)
	}
	if res := c.request(base.Play, c.url, nil, nil); res.StatusCode != base.StatusOK {
		c.t.Fatalf("PLAY: %v", res.StatusCode)
	}
}

// TestFleetWire checks what the fleet writes, on the wire, for three
// cameras read at once on channels of the client's choosing: RTP sequence
// numbers without a gap, video timestamps one frame apart (frames end at
// the marker bit) across a loop of the clip, each session with SSRCs of
// its own that its sender reports carry, and a keepalive answered in the
// middle of the media.
func TestFleetWire(t *testing.T) {
	t.Parallel()
	f := startFleet(t, FleetConfig{Cameras: 3, Audio: true})
	clip, err := Fixture(CodecH264, false)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		ssrcs []uint32
		err   error
	}
	results := make([]result, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		c := dialRaw(t, f.URL(i+1))
		c.play(4, 6) // not the default channels
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i].err = checkWire(c, len(clip.Units)+5)
			results[i].ssrcs = []uint32{c.ssrc[4], c.ssrc[6]}
		}()
	}
	wg.Wait()
	seen := map[uint32]bool{}
	for i, r := range results {
		if r.err != nil {
			t.Errorf("cam-%d: %v", i+1, r.err)
		}
		for _, s := range r.ssrcs {
			if seen[s] {
				t.Errorf("cam-%d: SSRC %08x used twice", i+1, s)
			}
			seen[s] = true
		}
	}
	if st := f.Stats(); st.Sessions != 3 || st.Frames == 0 || st.SenderReports == 0 {
		t.Errorf("stats %+v: want 3 sessions playing, frames and sender reports", st)
	}
}

// checkWire reads frames video frames of a rawClient playing video on
// channel 4 and audio on 6, then sends a keepalive and waits for its
// answer among the frames.
func checkWire(c *rawClient, frames int) error {
	_ = c.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	lastSeq := map[int]int{}
	var lastTS uint32
	video, reports := 0, map[int]int{}
	for video < frames {
		fr, res, err := c.next()
		if err != nil {
			return err
		}
		if res != nil {
			return fmt.Errorf("unexpected answer %v", res.StatusCode)
		}
		switch fr.channel {
		case 4, 6:
			p := fr.payload
			if len(p) < 12 || p[0]>>6 != 2 {
				return fmt.Errorf("channel %d: not RTP", fr.channel)
			}
			if ssrc := binary.BigEndian.Uint32(p[8:]); ssrc != c.ssrc[fr.channel] {
				return fmt.Errorf("channel %d: SSRC %08x, SETUP said %08x", fr.channel, ssrc, c.ssrc[fr.channel])
			}
			seq := int(binary.BigEndian.Uint16(p[2:]))
			if last, ok := lastSeq[fr.channel]; ok && seq != (last+1)&0xffff {
				return fmt.Errorf("channel %d: sequence %d after %d", fr.channel, seq, last)
			}
			lastSeq[fr.channel] = seq
			if fr.channel == 4 && p[1]&0x80 != 0 { // the last packet of a frame
				ts := binary.BigEndian.Uint32(p[4:])
				if video > 0 && ts-lastTS != 6000 {
					return fmt.Errorf("video frame %d: timestamp step %d, want 6000", video, ts-lastTS)
				}
				lastTS = ts
				video++
			}
		case 5, 7:
			p := fr.payload
			if len(p) < senderReportSize || p[1] != 200 {
				return fmt.Errorf("channel %d: not a sender report", fr.channel)
			}
			if ssrc := binary.BigEndian.Uint32(p[4:]); ssrc != c.ssrc[fr.channel-1] {
				return fmt.Errorf("sender report of SSRC %08x on channel %d, SETUP said %08x", ssrc, fr.channel, c.ssrc[fr.channel-1])
			}
			reports[fr.channel]++
		default:
			return fmt.Errorf("frame on channel %d", fr.channel)
		}
	}
	if reports[5] == 0 || reports[7] == 0 {
		return fmt.Errorf("sender reports %v, want some for video and audio", reports)
	}
	var skipped []frame
	for _, m := range []base.Method{base.GetParameter, base.Options} {
		res, err := c.do(m, c.url, nil, &skipped)
		if err != nil {
			return err
		}
		if res.StatusCode != base.StatusOK {
			return fmt.Errorf("keepalive %s: %v", m, res.StatusCode)
		}
	}

	return nil
}

// TestFleetAnswers checks the answers to requests a fleet camera refuses.
func TestFleetAnswers(t *testing.T) {
	t.Parallel()
	f := startFleet(t, FleetConfig{Cameras: 2})
	udp := headers.Transport{Protocol: headers.TransportProtocolUDP, ClientPorts: &[2]int{5000, 5001}}
	tcp := headers.Transport{Protocol: headers.TransportProtocolTCP, InterleavedIDs: &[2]int{0, 1}}
	cases := []struct {
		name   string
		method base.Method
		path   string
		h      base.Header
		want   base.StatusCode
	}{
		{"unknown path", base.Describe, "/cam-3", nil, base.StatusNotFound},
		{"camera 0", base.Describe, "/cam-0", nil, base.StatusNotFound},
		{"leading zero", base.Describe, "/cam-01", nil, base.StatusNotFound},
		{"other path", base.Describe, "/live", nil, base.StatusNotFound},
		{"udp", base.Setup, "/cam-1/trackID=0", base.Header{"Transport": udp.Marshal()}, base.StatusUnsupportedTransport},
		{"no audio track", base.Setup, "/cam-1/trackID=1", base.Header{"Transport": tcp.Marshal()}, base.StatusNotFound},
		{"no transport", base.Setup, "/cam-1/trackID=0", nil, base.StatusBadRequest},
		{"play without setup", base.Play, "/cam-1", nil, base.StatusSessionNotFound},
		{"announce", base.Announce, "/cam-1", nil, base.StatusNotImplemented},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dialRaw(t, f.URL(1))
			u := "rtsp://" + f.Addr() + tc.path
			if res := c.request(tc.method, u, tc.h, nil); res.StatusCode != tc.want {
				t.Fatalf("%s %s: %v, want %v", tc.method, tc.path, res.StatusCode, tc.want)
			}
		})
	}
	t.Run("second camera on one connection", func(t *testing.T) {
		t.Parallel()
		c := dialRaw(t, f.URL(1))
		h := func() base.Header { return base.Header{"Transport": tcp.Marshal()} }
		if res := c.request(base.Setup, f.URL(1)+"/trackID=0", h(), nil); res.StatusCode != base.StatusOK {
			t.Fatalf("SETUP cam-1: %v", res.StatusCode)
		}
		if res := c.request(base.Setup, f.URL(2)+"/trackID=0", h(), nil); res.StatusCode != base.StatusBadRequest {
			t.Fatalf("SETUP cam-2 on cam-1's connection: %v, want 400", res.StatusCode)
		}
	})
}

// TestFleetSessionTimeout: a reader that sends nothing after PLAY (no
// keepalive, no receiver report) is disconnected after the session
// timeout.
func TestFleetSessionTimeout(t *testing.T) {
	t.Parallel()
	f := startFleet(t, FleetConfig{Cameras: 1, SessionTimeout: 500 * time.Millisecond})
	c := dialRaw(t, f.URL(1))
	c.play(0, -1)
	_ = c.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	for {
		if _, _, err := c.next(); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("still connected 20 s after a timeout of 500 ms")
			}
			break
		}
	}
	testenv.WaitFor(t, 5*time.Second, "no session playing", func() bool { return f.Stats().Sessions == 0 })
}

// TestFleetSlowReader: a reader that stops reading gets its frames dropped
// once MaxPending bytes wait for it; the queue stays bounded (by MaxPending
// and the rest of a frame the socket took in part).
func TestFleetSlowReader(t *testing.T) {
	t.Parallel()
	const maxPending = 64 << 10
	f := startFleet(t, FleetConfig{Cameras: 1, MaxPending: maxPending, SendBuffer: 16 << 10})
	c := dialRaw(t, f.URL(1))
	if tc, ok := c.nc.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4 << 10) // fill the socket buffers soon
	}
	c.play(0, -1)
	testenv.WaitFor(t, 60*time.Second, "dropped frames", func() bool { return f.Stats().Dropped > 0 })
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.open) != 1 {
		t.Fatalf("%d connections open, want 1", len(f.open))
	}
	largest := 0
	for _, fr := range f.cameras[0].clips.video.frames {
		largest = max(largest, len(fr.buf))
	}
	for s := range f.open {
		s.mu.Lock()
		queued := len(s.pending) - s.sent
		s.mu.Unlock()
		if queued > maxPending+largest {
			t.Errorf("%d bytes queued, more than MaxPending %d and a frame of %d", queued, maxPending, largest)
		}
	}
}
