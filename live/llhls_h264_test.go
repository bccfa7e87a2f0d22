//go:build cgo

package live

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

// newHLSNode is an rtcNode whose LL-HLS muxers go idle after idle.
func newHLSNode(t *testing.T, idle time.Duration, cfg WebRTCConfig) *rtcNode {
	t.Helper()
	s, _ := newTestServer(t, Config{IdleTimeout: idle})
	cfg.Interfaces = []string{"lo"}
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

// fetch GETs the node's file of camera and returns the status and body.
func (n *rtcNode) fetch(t *testing.T, camera, file string) (int, string) {
	t.Helper()
	res, err := http.Get(n.srv.URL + liveURL(camera, file))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, string(b)
}

// TestLLHLSInH264: /live/{camera}/h264/ is an H.265 camera's LL-HLS in
// H.264 from the node's transcoder (one per camera, shared with its
// WebRTC viewers, within TranscodeMax), an H.264 camera's own LL-HLS, and
// index.m3u8 stays the camera's H.265 untouched. Past TranscodeMax it
// answers 503 naming the transcode capacity; the transcoder stops once
// nobody asked for the rendition within the idle timeout, which makes
// room for another camera; a node that does not transcode answers 406.
func TestLLHLSInH264(t *testing.T) {
	t.Parallel()
	n := newHLSNode(t, 6*time.Second, WebRTCConfig{TranscodeMax: 1})
	n.playH265(t, "cam")
	n.playH265(t, "cam2")
	n.playH264(t, "cam264")
	testenv.WaitFor(t, 10*time.Second, "the cameras' first units", func() bool {
		for id, c := range map[string]media.Codec{"cam": media.H265, "cam2": media.H265, "cam264": media.H264} {
			if st := n.s.stream(id); st == nil || st.hub.videoCodec() != c {
				return false
			}
		}
		return true
	})

	// codecs returns the CODECS of a multivariant playlist.
	codecs := func(camera, file string) string {
		t.Helper()
		code, pl := n.fetch(t, camera, file)
		if code != http.StatusOK {
			t.Fatalf("%s %s: %d %q", camera, file, code, pl)
		}
		_, c, _ := strings.Cut(pl, `CODECS="`)
		c, _, _ = strings.Cut(c, `"`)
		return c
	}
	if c := codecs("cam264", "h264/index.m3u8"); !strings.HasPrefix(c, "avc1.") {
		t.Errorf("an H.264 camera's H.264 LL-HLS has CODECS %q; want avc1", c)
	}
	if got := n.w.tc.count(); got != 0 {
		t.Errorf("%d transcodes for an H.264 camera's H.264 LL-HLS; want 0 (it is the camera's own)", got)
	}
	if c := codecs("cam", "h264/index.m3u8"); !strings.HasPrefix(c, "avc1.") {
		t.Fatalf("an H.265 camera's H.264 LL-HLS has CODECS %q; want avc1", c)
	}
	// A player polls its media playlist until the test stops it.
	_, mv := n.fetch(t, "cam", "h264/index.m3u8")
	file, _, _ := strings.Cut(playlistURI(t, mv), "?")
	stop, polled := make(chan struct{}), make(chan struct{})
	var parts atomic.Bool
	go func() {
		defer close(polled)
		for {
			if res, err := http.Get(n.srv.URL + liveURL("cam", "h264/"+file)); err == nil {
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode == http.StatusOK && strings.Contains(string(b), "#EXT-X-PART:") {
					parts.Store(true)
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-polled
	}()
	testenv.WaitFor(t, 15*time.Second, "a part in the H.264 media playlist", parts.Load)
	if got := n.w.tc.count(); got != 1 {
		t.Fatalf("%d transcodes for the H.264 LL-HLS of one camera; want 1", got)
	}
	if c := codecs("cam", "index.m3u8"); !strings.HasPrefix(c, "hvc1.") {
		t.Errorf("the H.265 camera's own LL-HLS has CODECS %q; want hvc1, untouched", c)
	}

	// A WebRTC viewer of the same camera in H.264 shares the transcoder.
	v := dial(t, n.whepURL("cam", time.Now().Add(time.Hour)), media.H264)
	v.waitFrames(t, 5, 20*time.Second)
	if got := n.w.tc.count(); got != 1 {
		t.Errorf("%d transcodes for an LL-HLS and a WebRTC viewer of one camera; want 1", got)
	}
	req, _ := http.NewRequest(http.MethodDelete, n.srv.URL+v.location, nil)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}

	code, body := n.fetch(t, "cam2", "h264/index.m3u8")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "transcode capacity") {
		t.Fatalf("a second H.265 camera's H.264 LL-HLS past TranscodeMax: %d %q; want 503 naming the transcode capacity", code, body)
	}

	close(stop)
	<-polled
	testenv.WaitFor(t, 20*time.Second, "the transcoder stopping once nobody asks for the rendition", func() bool {
		return n.w.tc.count() == 0
	})
	if c := codecs("cam2", "h264/index.m3u8"); !strings.HasPrefix(c, "avc1.") {
		t.Errorf("the second camera's H.264 LL-HLS once there is room: CODECS %q; want avc1", c)
	}
}

// TestLLHLSInH264WithoutWebRTC: a node without WebRTC whose Config sets
// TranscodeMax serves an H.265 camera's LL-HLS in H.264 all the same.
func TestLLHLSInH264WithoutWebRTC(t *testing.T) {
	s, _ := newTestServer(t, Config{TranscodeMax: 1})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	n := &rtcNode{s: s, srv: srv}
	n.playH265(t, "cam")
	testenv.WaitFor(t, 10*time.Second, "the camera's first unit", func() bool {
		return n.s.stream("cam") != nil && n.s.stream("cam").hub.videoCodec() == media.H265
	})
	code, pl := n.fetch(t, "cam", "h264/index.m3u8")
	if code != http.StatusOK || !strings.Contains(pl, `CODECS="avc1.`) {
		t.Fatalf("H.264 LL-HLS of an H.265 camera on a node without WebRTC: %d %q; want an avc1 playlist", code, pl)
	}
	if got := s.tc.Load().count(); got != 1 {
		t.Errorf("%d transcodes; want 1", got)
	}
}

// TestLLHLSInH264WithoutTranscodes: a node that does not transcode
// answers 406 for an H.265 camera's H.264 LL-HLS, naming H.265.
func TestLLHLSInH264WithoutTranscodes(t *testing.T) {
	n := newHLSNode(t, time.Minute, WebRTCConfig{})
	n.playH265(t, "cam")
	testenv.WaitFor(t, 10*time.Second, "the camera's first unit", func() bool {
		return n.s.stream("cam") != nil && n.s.stream("cam").hub.videoCodec() == media.H265
	})
	if code, body := n.fetch(t, "cam", "h264/index.m3u8"); code != http.StatusNotAcceptable || !strings.Contains(body, "H265") {
		t.Fatalf("H.264 LL-HLS of an H.265 camera without transcodes: %d %q; want 406 naming H265", code, body)
	}
}
