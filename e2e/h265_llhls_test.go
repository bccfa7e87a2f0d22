package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// TestH265LiveHLSInH264InChromium: on a node with WebRTC off (live video
// over LL-HLS only, as for a page whose WebRTC fails), an H.265
// camera plays in Debian's headless Chromium, whose MSE decodes no HEVC:
// the page asks for the node's LL-HLS in H.264 (dataset.rendition h264),
// served from the camera's transcoder, one running while it watches. An
// H.264 camera plays the same way from its own stream, without a
// transcoder. A second H.265 camera, past webrtc.transcode_max 1, is
// refused and the page says why (transcode-capacity).
func TestH265LiveHLSInH264InChromium(t *testing.T) {
	t.Parallel()
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	m := testenv.SharedMinIO(t)
	cams := startSynth(t, synth.CameraSpec{Path: "h265", Codec: synth.CodecH265, Small: true},
		synth.CameraSpec{Path: "h264", Codec: synth.CodecH264, Small: true},
		synth.CameraSpec{Path: "h265b", Codec: synth.CodecH265, Small: true})
	c := s3Config(t, m)
	c.WebRTC.Enabled = false // live over LL-HLS only; the transcodes run all the same
	c.WebRTC.TranscodeMax = 1
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	for _, id := range []string{"h265", "h264", "h265b"} {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: cams.URL(id), Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /api/player/", http.StripPrefix("/api/player", player.Assets()))
	mux.HandleFunc("GET /player/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		player.Page(w, r, player.Params{CameraID: id, CameraName: id, LiveURL: a.LiveURL(id, time.Now().Add(time.Hour)),
			VODURL: "/vod.m3u8?x=1", AssetsURL: "/api/player/"})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	transcodes := func() float64 { return scrapeMetrics(t, a.URL()+"/metrics")["vigia_live_transcodes"] }

	type state struct {
		Transport string  `json:"transport"`
		Rendition string  `json:"rendition"`
		Reason    string  `json:"reason"`
		Time      float64 `json:"time"`
		HEVC      bool    `json:"hevc"`
	}
	b := headless.Chromium(t)
	for _, tc := range []struct {
		camera     string
		transcodes float64
	}{
		{"h264", 0}, // first: a transcoder runs on for the idle timeout once started
		{"h265", 1},
	} {
		t.Run(tc.camera, func(t *testing.T) {
			opened := time.Now()
			if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+"/player/"+tc.camera)); err != nil {
				t.Fatal(err)
			}
			var s state
			var first, firstAt time.Duration
			testenv.WaitFor(t, 25*time.Second, "the camera playing live over LL-HLS for 3 s", func() bool {
				if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`({transport: document.body.dataset.transport || '',
  rendition: document.body.dataset.rendition || '', reason: document.body.dataset.unplayable || '',
  time: document.getElementById('video').currentTime, hevc: window.vigiaPlayability.hevc().mse})`, &s)); err != nil {
					t.Fatalf("read page: %v", err)
				}
				if s.HEVC {
					t.Skip("this browser decodes H.265 in MSE: it gets the camera's H.265")
				}
				if s.Reason != "" {
					u := strings.Replace(a.LiveURL(tc.camera, time.Now().Add(time.Hour)), "/index.m3u8", "/h264/index.m3u8", 1)
					res, err := http.Get(u)
					if err == nil {
						body, _ := io.ReadAll(res.Body)
						res.Body.Close()
						t.Logf("GET %s: %d %s", u, res.StatusCode, body)
					}
					t.Fatalf("the page says it cannot play: %s", s.Reason)
				}
				if first == 0 && s.Time > 0 {
					first, firstAt = time.Since(opened), time.Duration(s.Time*float64(time.Second))
				}
				return first > 0 && s.Time-firstAt.Seconds() >= 3
			})
			t.Logf("%s: first picture %v after the page was opened; transport %s, rendition %s", tc.camera,
				first.Round(10*time.Millisecond), s.Transport, s.Rendition)
			if s.Transport != "hls" || s.Rendition != "h264" {
				t.Errorf("transport %q rendition %q; want hls and h264", s.Transport, s.Rendition)
			}
			if n := transcodes(); n != tc.transcodes {
				t.Errorf("vigia_live_transcodes = %v while the page watches; want %v", n, tc.transcodes)
			}
		})
	}

	// The node transcodes its one camera already: the second H.265
	// camera's H.264 playlist is refused and the page says why.
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+"/player/h265b")); err != nil {
		t.Fatal(err)
	}
	var reason string
	testenv.WaitFor(t, 25*time.Second, "the page saying the node has no transcode left", func() bool {
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`document.body.dataset.unplayable || ''`, &reason)); err != nil {
			t.Fatalf("read page: %v", err)
		}
		return reason != ""
	})
	if reason != "transcode-capacity" {
		t.Errorf("the page says %q; want transcode-capacity", reason)
	}
}
