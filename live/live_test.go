package live

import (
	"bytes"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vigia/vigia/synth"
)

// TestNotHere checks that a valid request for a camera this node does not
// record, or no longer records, is 404 and counted.
func TestNotHere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, reg := newTestServer(t, Config{})
		h := s.Handler()
		if res := get(h, liveURL("elsewhere", "index.m3u8")); res.Code != http.StatusNotFound {
			t.Errorf("unknown camera: %d, want 404", res.Code)
		}
		c := s.Consumer()("cam")
		if got := s.Cameras(); !slices.Equal(got, []string{"cam"}) {
			t.Errorf("cameras %v, want [cam]", got)
		}
		c.Close()
		if res := get(h, liveURL("cam", "index.m3u8")); res.Code != http.StatusNotFound {
			t.Errorf("stopped camera: %d, want 404", res.Code)
		}
		if got := s.Cameras(); len(got) != 0 {
			t.Errorf("cameras after close %v, want none", got)
		}
		if got := counter(t, reg, "vigia_live_requests_total", "result", "not_here"); got != 2 {
			t.Errorf("not_here requests counted %v, want 2", got)
		}
	})
}

// TestStartsOnDemand checks that nothing is muxed while nobody watches, that
// a viewer's first request starts the muxer at the camera's next keyframe
// and waits for it, and that the playlist, init file and parts it gets
// carry the token and are served.
func TestStartsOnDemand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newTestServer(t, Config{})
		var handled atomic.Int64
		s.hookUnit = func() { handled.Add(1) }
		h := s.Handler()
		c := s.Consumer()("cam")
		defer c.Close()
		st := c.(*stream)
		src := newSource(t, synth.CodecH264, false).withAudio()
		c.Tracks(src.tracks())

		src.feed(c, src.gop()+5)
		if st.muxer.Load() != nil || handled.Load() != 0 {
			t.Fatalf("nobody watches, yet the muxer runs (%v) or units were queued (%d)", st.muxer.Load() != nil, handled.Load())
		}

		index := URL("", testKeys, "cam", time.Now().Add(time.Hour))
		req := goGet(t, h, index)
		synctest.Wait()
		for !src.key() {
			src.feed(c, 1)
			if st.muxer.Load() != nil {
				t.Fatal("the muxer started before a keyframe")
			}
		}
		src.feed(c, 1)
		if st.muxer.Load() == nil {
			t.Fatal("the muxer did not start at the keyframe")
		}
		if req.answered() {
			t.Fatalf("playlist served before a segment was complete: %d %q", req.res.Code, req.res.Body)
		}
		src.feed(c, src.gop())
		res := req.wait()
		body := res.Body.String()
		if res.Code != http.StatusOK {
			t.Fatalf("index.m3u8: %d %q", res.Code, body)
		}
		for _, want := range []string{"RESOLUTION=1280x720", "avc1.", "mp4a.40.2"} {
			if !strings.Contains(body, want) {
				t.Errorf("index.m3u8 lacks %q:\n%s", want, body)
			}
		}
		if got := res.Header().Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("Access-Control-Allow-Origin %q without an allowed origin", got)
		}

		query := index[strings.Index(index, "?")+1:]
		media := playlistURI(t, body)
		if !strings.HasSuffix(media, "?"+query) {
			t.Fatalf("media playlist URI %q does not carry the token", media)
		}
		res = get(h, "/live/cam/"+media)
		pl := res.Body.String()
		if res.Code != http.StatusOK || !strings.Contains(pl, "#EXT-X-PART:") {
			t.Fatalf("media playlist: %d\n%s", res.Code, pl)
		}
		uris := regexp.MustCompile(`URI="([^"]+)"`).FindAllStringSubmatch(pl, -1)
		if len(uris) < 2 {
			t.Fatalf("media playlist lists no init file and parts:\n%s", pl)
		}
		for _, u := range uris[:2] { // the init file, then the first part
			if !strings.HasSuffix(u[1], "?"+query) {
				t.Errorf("URI %q does not carry the token", u[1])
			}
			res := get(h, "/live/cam/"+u[1])
			if res.Code != http.StatusOK || !bytes.Contains(res.Body.Bytes()[:min(res.Body.Len(), 64)], []byte("ftyp")) &&
				!bytes.Contains(res.Body.Bytes()[:min(res.Body.Len(), 64)], []byte("moof")) {
				t.Errorf("%s: %d, %d bytes, not fMP4", u[1], res.Code, res.Body.Len())
			}
			if res := get(h, "/live/cam/"+strings.TrimSuffix(u[1], query)+"exp=1&sig=00"); res.Code != http.StatusForbidden {
				t.Errorf("%s with a bad token: %d, want 403", u[1], res.Code)
			}
		}
	})
}

// TestStartTimeout checks that a first request waits StartTimeout for a
// keyframe, then gets 503, counted.
func TestStartTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, reg := newTestServer(t, Config{StartTimeout: 10 * time.Second})
		c := s.Consumer()("cam")
		defer c.Close()
		src := newSource(t, synth.CodecH264, false)
		c.Tracks(src.tracks())
		src.n++ // mid-GOP: the camera sends a GOP's worth without a keyframe
		deadline := time.Now().Add(10 * time.Second)
		req := goGet(t, s.Handler(), liveURL("cam", "index.m3u8"))
		synctest.Wait()
		src.feedPaced(c, src.gop()-1)
		time.Sleep(time.Until(deadline) - time.Millisecond)
		synctest.Wait()
		if req.answered() {
			t.Fatalf("answered before StartTimeout: %d", req.res.Code)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if !req.answered() || req.res.Code != http.StatusServiceUnavailable {
			t.Fatalf("at StartTimeout: answered %v, want 503", req.answered())
		}
		if got := counter(t, reg, "vigia_live_requests_total", "result", "not_started"); got != 1 {
			t.Errorf("not_started requests counted %v, want 1", got)
		}
	})
}

// TestCloseWhileWaiting checks that a request waiting for the muxer is
// answered 404 as soon as the camera stops on this node, and that the
// stopped consumer ignores what its pipeline still sends.
func TestCloseWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newTestServer(t, Config{})
		c := s.Consumer()("cam")
		src := newSource(t, synth.CodecH264, false)
		c.Tracks(src.tracks())
		req := goGet(t, s.Handler(), liveURL("cam", "index.m3u8"))
		synctest.Wait()
		c.Close()
		synctest.Wait()
		if !req.answered() {
			t.Fatal("the request still waits after the stream closed")
		}
		if req.res.Code != http.StatusNotFound {
			t.Errorf("status %d, want 404", req.res.Code)
		}
		c.Tracks(src.tracks())
		src.feed(c, 1)
		if n := c.(*stream).q.Len(); n != 0 {
			t.Errorf("%d units queued after Close", n)
		}
		c.Close()
	})
}

// TestCameraRestart checks that a new consumer for a camera (the camera
// restarted) replaces the old stream: the old one stops and ignores its
// pipeline, a waiting viewer is served by the new one, and the old
// pipeline's Close does not remove the new stream.
func TestCameraRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newTestServer(t, Config{})
		h := s.Handler()
		factory := s.Consumer()
		c1 := factory("cam")
		old := newSource(t, synth.CodecH264, false)
		c1.Tracks(old.tracks())
		req := goGet(t, h, liveURL("cam", "index.m3u8"))
		synctest.Wait()

		c2 := factory("cam")
		defer c2.Close()
		synctest.Wait()
		select {
		case <-c1.(*stream).done:
		default:
			t.Fatal("the old stream still runs")
		}
		old.feed(c1, 1) // the old pipeline is not stopped yet
		c1.Tracks(old.tracks())
		if req.answered() {
			t.Fatalf("the waiting request was answered %d when the camera restarted", req.res.Code)
		}

		src := newSource(t, synth.CodecH264, true)
		c2.Tracks(src.tracks())
		src.feed(c2, 2*src.gop()+1)
		res := req.wait()
		if res.Code != http.StatusOK || !strings.Contains(res.Body.String(), "RESOLUTION=640x360") {
			t.Fatalf("waiting request: %d %q, want the new stream's playlist", res.Code, res.Body)
		}

		c1.Close() // the old pipeline ends
		if got := s.Cameras(); !slices.Equal(got, []string{"cam"}) {
			t.Errorf("cameras %v, want [cam]", got)
		}
		if res := get(h, liveURL("cam", "index.m3u8")); res.Code != http.StatusOK {
			t.Errorf("after the old pipeline's Close: %d, want 200", res.Code)
		}
	})
}
