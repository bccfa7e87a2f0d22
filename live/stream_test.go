package live

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	vstream "github.com/vigia/vigia/stream"
	"github.com/vigia/vigia/synth"
)

// TestNewRunNeverDropped checks that the tracks of a new run of the source
// reach the stream even when its queue is full: the muxer is rebuilt with
// them (here H.265 640x360 after H.264 1280x720) and the units of the old
// run still queued are not muxed with them.
func TestNewRunNeverDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const queue = 8
		s, reg := newTestServer(t, Config{QueueSize: queue})
		v := newValve()
		s.hookUnit = v.pass
		h := s.Handler()
		c := s.Consumer()("cam")
		defer c.Close()
		defer v.open() // before Close, when the test fails

		old := newSource(t, synth.CodecH264, false)
		c.Tracks(old.tracks())
		req := goGet(t, h, liveURL("cam", "index.m3u8"))
		synctest.Wait()
		old.feed(c, 2*old.gop()+1)
		res := req.wait()
		if res.Code != http.StatusOK || !strings.Contains(res.Body.String(), "RESOLUTION=1280x720") {
			t.Fatalf("first run: %d %q", res.Code, res.Body)
		}

		// The muxer falls behind: its queue fills with units of the old run,
		// then the source starts a new run.
		v.shut()
		old.burst(c, 1)
		synctest.Wait() // the stream's goroutine holds that unit
		old.burst(c, queue)
		next := newSource(t, synth.CodecH265, true)
		c.Tracks(next.tracks())
		next.burst(c, 5) // dropped: the queue is full
		v.open()
		synctest.Wait()
		// The first frame of the new run found the queue full, the next
		// ones waited for a keyframe; the new run's tracks are no frame.
		if got := counter(t, reg, "vigia_live_dropped_frames_total"); got != 5 {
			t.Errorf("dropped frames = %v, want 5", got)
		}

		next.feed(c, 3*next.gop())
		res = get(h, liveURL("cam", "index.m3u8"))
		body := res.Body.String()
		if res.Code != http.StatusOK || !strings.Contains(body, "RESOLUTION=640x360") || !strings.Contains(body, "hvc1") {
			t.Fatalf("after the new run, want an H.265 640x360 playlist, got %d:\n%s", res.Code, body)
		}
	})
}

// watch makes a viewer ask for camera's playlist and feeds src until the
// muxer answers it with a playlist.
func watch(t *testing.T, s *Server, c vstream.Consumer, src *source) {
	t.Helper()
	req := goGet(t, s.Handler(), liveURL("cam", "index.m3u8"))
	synctest.Wait()
	for n := 0; !req.answered(); n++ {
		if n > 5*src.gop() {
			t.Fatal("the playlist was not served")
		}
		src.feedPaced(c, 1)
	}
	if req.res.Code != http.StatusOK {
		t.Fatalf("index.m3u8: %d %q", req.res.Code, req.res.Body)
	}
}

// TestIdleTimeout checks that the muxer runs while viewers ask within
// IdleTimeout, stops IdleTimeout after the last request, whether the camera
// sends or not, queues nothing while stopped, and starts again at the next
// request.
func TestIdleTimeout(t *testing.T) {
	for _, sending := range []bool{true, false} {
		name := map[bool]string{true: "camera sending", false: "camera silent"}[sending]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const idle = time.Minute
				s, _ := newTestServer(t, Config{IdleTimeout: idle})
				c := s.Consumer()("cam")
				defer c.Close()
				st := c.(*stream)
				src := newSource(t, synth.CodecH264, false)
				c.Tracks(src.tracks())
				watch(t, s, c, src)
				first := st.muxer.Load()

				pass := func(d time.Duration) {
					if !sending {
						time.Sleep(d)
						return
					}
					for end := time.Now().Add(d); time.Now().Before(end); {
						src.feedPaced(c, 1)
					}
				}
				// A viewer asks every 40 s: the muxer keeps running.
				for range 3 {
					pass(40 * time.Second)
					if res := get(s.Handler(), liveURL("cam", "index.m3u8")); res.Code != http.StatusOK {
						t.Fatalf("index.m3u8: %d", res.Code)
					}
				}
				if st.muxer.Load() != first {
					t.Fatal("the muxer stopped while viewers asked")
				}
				last := time.Now()
				pass(idle - time.Second)
				synctest.Wait()
				if st.muxer.Load() != first {
					t.Fatal("the muxer stopped before IdleTimeout")
				}
				pass(time.Until(last.Add(idle + time.Second)))
				synctest.Wait()
				if st.muxer.Load() != nil {
					t.Fatal("the muxer still runs IdleTimeout after the last request")
				}
				src.feed(c, 2*src.gop())
				if n := st.q.Len(); n != 0 {
					t.Errorf("%d units queued while nobody watches", n)
				}

				watch(t, s, c, src)
				if m := st.muxer.Load(); m == nil || m == first {
					t.Fatal("the next request did not start a new muxer")
				}
			})
		})
	}
}

// TestQueueFull checks that a muxer that falls behind loses units, counted,
// without ever blocking the camera's pipeline, and that video resumes at the
// next keyframe in the same muxer.
func TestQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const queue = 8
		s, reg := newTestServer(t, Config{QueueSize: queue})
		v := newValve()
		s.hookUnit = v.pass
		c := s.Consumer()("cam")
		defer c.Close()
		defer v.open() // before Close, when the test fails
		st := c.(*stream)
		src := newSource(t, synth.CodecH264, false)
		c.Tracks(src.tracks())
		watch(t, s, c, src)
		m := st.muxer.Load()
		for src.key() { // start the overflow mid-GOP
			src.feed(c, 1)
		}
		dropped := func() float64 { return counter(t, reg, "vigia_live_dropped_frames_total") }

		v.shut()
		src.burst(c, 1)
		synctest.Wait() // the stream's goroutine holds that unit
		src.burst(c, queue)
		if got := dropped(); got != 0 {
			t.Fatalf("dropped %v before the queue was full", got)
		}
		// Unit never blocks: were it to wait for room, this bubble would
		// deadlock.
		src.burst(c, 3)
		if got := dropped(); got != 3 {
			t.Fatalf("dropped %v with the queue full, want 3", got)
		}
		v.open()
		synctest.Wait()

		// Room again, but the frames before the next keyframe refer to
		// lost ones: dropped too.
		n := 0
		for !src.key() {
			src.feed(c, 1)
			n++
		}
		if got := dropped(); got != float64(3+n) {
			t.Fatalf("dropped %v, want %d: frames after the overflow, before a keyframe, are dropped", got, 3+n)
		}
		// The number of segments made: the media sequence of the first
		// segment listed plus the segments listed.
		segments := func() int {
			pl := get(s.Handler(), liveURL("cam", "video1_stream.m3u8")).Body.String()
			m := regexp.MustCompile(`#EXT-X-MEDIA-SEQUENCE:(\d+)`).FindStringSubmatch(pl)
			if m == nil {
				t.Fatalf("media playlist without a media sequence:\n%s", pl)
			}
			seq, _ := strconv.Atoi(m[1])
			return seq + strings.Count(pl, "#EXTINF:")
		}
		before := segments()
		src.feed(c, 2*src.gop())
		if got := dropped(); got != float64(3+n) {
			t.Errorf("dropped %v after the keyframe, want %d", got, 3+n)
		}
		if after := segments(); after <= before {
			t.Errorf("segments %d then %d: video did not resume at the keyframe", before, after)
		}
		if st.muxer.Load() != m {
			t.Error("the muxer was restarted: a full queue should only lose units")
		}
	})
}

// TestNoMuxerForViewerGone checks that a keyframe handled after the viewer
// who asked for it has left (IdleTimeout ago) does not start the muxer.
func TestNoMuxerForViewerGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = time.Minute
		s, _ := newTestServer(t, Config{IdleTimeout: idle})
		v := newValve()
		s.hookUnit = v.pass
		c := s.Consumer()("cam")
		defer c.Close()
		defer v.open() // before Close, when the test fails
		st := c.(*stream)
		src := newSource(t, synth.CodecH264, false)
		c.Tracks(src.tracks())
		src.n = 1 // mid-GOP

		req := goGet(t, s.Handler(), liveURL("cam", "index.m3u8"))
		synctest.Wait()
		v.shut()
		src.burst(c, 1)
		synctest.Wait() // the stream's goroutine holds that unit
		for !src.key() {
			src.burst(c, 1)
		}
		src.burst(c, 1) // a keyframe, queued while the viewer waited
		time.Sleep(idle + time.Second)
		synctest.Wait()
		if !req.answered() || req.res.Code != http.StatusServiceUnavailable {
			t.Fatal("the viewer was not answered 503 after StartTimeout")
		}
		v.open()
		synctest.Wait()
		if st.muxer.Load() != nil {
			t.Fatal("the muxer started for a viewer who left")
		}
	})
}
