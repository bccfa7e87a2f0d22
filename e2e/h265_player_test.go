package e2e

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// unplayableState is what the H.265 tests read of the page.
type unplayableState struct {
	Reason  string  `json:"reason"`
	Text    string  `json:"text"`
	Shown   bool    `json:"shown"`
	State   string  `json:"state"`
	Ready   int     `json:"ready"`
	Time    float64 `json:"time"`
	HEVC    bool    `json:"hevc"`
	WebRTC  string  `json:"webrtc"`
	Session string  `json:"sessions"`
}

const readUnplayable = `(() => { const u = document.getElementById('unplayable'), v = document.getElementById('video');
  return {reason: document.body.dataset.unplayable || '', text: u ? u.textContent : '', shown: !!u && !u.hidden,
    state: document.body.dataset.state || '', ready: v.readyState, time: v.currentTime,
    hevc: window.vigiaPlayability.hevc().any, webrtc: document.body.dataset.webrtcError || '',
    sessions: document.body.dataset.webrtcSessions || ''}; })()`

// TestH265UnplayableSaysWhy: an H.265 camera of a node that does not
// transcode (webrtc.transcode_max 0), opened in a browser that decodes
// H.265 neither in MSE nor over WebRTC (Debian's headless Chromium) shows, live and recorded, a message over the video saying so
// and sets document.body.dataset.unplayable to "h265", never a silent
// black frame. The message is checked in a screenshot of the stage.
func TestH265UnplayableSaysWhy(t *testing.T) {
	t.Parallel()
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "cam", Codec: synth.CodecH265, Small: true})
	c := s3Config(t, m)
	c.WebRTC.TranscodeMax = 0 // a node that does not transcode: the offer is refused (406)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "cam", URL: cam.URL("cam"), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	whep := a.WHEPURL("cam", time.Now().Add(time.Hour))
	mux := http.NewServeMux()
	mux.Handle("GET /api/player/", http.StripPrefix("/api/player", player.Assets()))
	mux.Handle("GET /api/camera/{id}/vod.m3u8", player.VODHandler(player.VODConfig{Catalogue: catalogue.New(catalogue.Config{Store: st}), Sign: st.SignedURL}))
	mux.HandleFunc("GET /player", func(w http.ResponseWriter, r *http.Request) {
		q, err := player.ParseQuery(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		player.Page(w, r, player.Params{CameraID: "cam", CameraName: "cam", LiveURL: whep,
			VODURL: "/api/camera/cam/vod.m3u8?x=1", AssetsURL: "/api/player/", Query: q})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	segs := waitSegments(t, st, "cam", 2, 60*time.Second)

	b := headless.Chromium(t)
	for _, tc := range []struct {
		name, query string
	}{
		{"live", "ts=0"},
		{"recorded", fmt.Sprintf("ts=%d&delay=0", segs[0].StartMs/1000+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+"/player?"+tc.query)); err != nil {
				t.Fatal(err)
			}
			var s unplayableState
			testenv.WaitFor(t, 30*time.Second, tc.name+": the page saying why it does not play", func() bool {
				if err := chromedp.Run(b.Ctx, chromedp.Evaluate(readUnplayable, &s)); err != nil {
					t.Fatal(err)
				}
				if s.HEVC {
					t.Skip("this browser decodes H.265: nothing to say")
				}
				return s.Reason != ""
			})
			t.Logf("%s: reason %q, state %q, WebRTC %q, message %q", tc.name, s.Reason, s.State, s.WebRTC, s.Text)
			if s.Reason != "h265" || !s.Shown || !strings.Contains(s.Text, "H.265") {
				t.Fatalf("%s: reason %q, message shown %v %q; want h265 and a message naming H.265", tc.name, s.Reason, s.Shown, s.Text)
			}
			if tc.name == "live" && !strings.Contains(s.WebRTC, "406") {
				t.Errorf("live: WebRTC failure %q; want the node's 406 refusal", s.WebRTC)
			}
			assertMessageDrawn(t, b)
		})
	}
}

// assertMessageDrawn takes a screenshot of the player's stage and checks
// the message box is drawn over the video: its area holds light text
// pixels on its dark red background, where a black frame has none.
func assertMessageDrawn(t *testing.T, b *headless.Browser) {
	t.Helper()
	var shot []byte
	if err := chromedp.Run(b.Ctx, chromedp.Screenshot("#unplayable", &shot, chromedp.ByID)); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	bounds := img.Bounds()
	light, red := 0, 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			switch {
			case r > 200 && g > 200 && bl > 200:
				light++
			case r > g+15 && r > bl+15:
				red++
			}
		}
	}
	total := bounds.Dx() * bounds.Dy()
	t.Logf("message box %dx%d: %d light pixels, %d red", bounds.Dx(), bounds.Dy(), light, red)
	if bounds.Dx() < 100 || bounds.Dy() < 20 || light < total/100 || red < total/4 {
		t.Fatalf("message box %dx%d with %d light and %d red pixels of %d: not drawn over the video", bounds.Dx(), bounds.Dy(), light, red, total)
	}
}

// TestH265LiveTranscodedInChromium: an H.265 camera plays live over WebRTC
// in Debian's headless Chromium, which offers no H.265: the node sends the
// H.264 rendition its transcoder makes while the page watches, and stops
// that transcoder when the page leaves. Past webrtc.transcode_max a second
// camera's viewer is refused and the page says why.
func TestH265LiveTranscodedInChromium(t *testing.T) {
	t.Parallel()
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	m := testenv.SharedMinIO(t)
	cams := startSynth(t, synth.CameraSpec{Path: "cam", Codec: synth.CodecH265},
		synth.CameraSpec{Path: "cam2", Codec: synth.CodecH265, Small: true})
	c := s3Config(t, m)
	c.WebRTC.TranscodeMax = 1
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	for _, id := range []string{"cam", "cam2"} {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: cams.URL(id), Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /api/player/", http.StripPrefix("/api/player", player.Assets()))
	mux.HandleFunc("GET /player/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		player.Page(w, r, player.Params{CameraID: id, CameraName: id, LiveURL: a.WHEPURL(id, time.Now().Add(time.Hour)),
			VODURL: "/vod.m3u8?x=1", AssetsURL: "/api/player/"})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	transcodes := func() float64 { return scrapeMetrics(t, a.URL()+"/metrics")["vigia_live_transcodes"] }

	b := headless.Chromium(t)
	opened := time.Now()
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+"/player/cam")); err != nil {
		t.Fatal(err)
	}
	type live struct {
		Transport string  `json:"transport"`
		Time      float64 `json:"time"`
		Why       string  `json:"why"`
		Reason    string  `json:"reason"`
		Codec     string  `json:"codec"`
	}
	read := func(b *headless.Browser) live {
		var s live
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`(() => { const v = document.getElementById('video');
  const tr = v.srcObject && v.srcObject.getVideoTracks()[0];
  return {transport: document.body.dataset.transport || '', time: v.currentTime,
    why: document.body.dataset.webrtcError || '', reason: document.body.dataset.unplayable || '',
    codec: window.vigiaPlayability.hevc().any ? 'hevc' : ''}; })()`, &s)); err != nil {
			t.Fatalf("read page: %v", err)
		}
		return s
	}
	var s live
	var first time.Duration
	testenv.WaitFor(t, 25*time.Second, "the H.265 camera playing live over WebRTC for 3 s", func() bool {
		s = read(b)
		if s.Codec == "hevc" {
			t.Skip("this browser decodes H.265: nothing is transcoded")
		}
		if s.Reason != "" {
			t.Fatalf("the page says it cannot play: %s (WebRTC: %s)", s.Reason, s.Why)
		}
		if first == 0 && s.Time > 0 {
			first = time.Since(opened)
		}
		return s.Transport == "webrtc" && s.Time >= 3
	})
	t.Logf("first picture %v after the page was opened; transport %s", first.Round(10*time.Millisecond), s.Transport)
	if n := transcodes(); n != 1 {
		t.Errorf("vigia_live_transcodes = %v while one camera is watched; want 1", n)
	}

	// A second camera needing a transcode is past the bound: refused, and
	// the page says why.
	b2 := headless.Chromium(t)
	if err := chromedp.Run(b2.Ctx, chromedp.Navigate(srv.URL+"/player/cam2")); err != nil {
		t.Fatal(err)
	}
	var s2 live
	testenv.WaitFor(t, 25*time.Second, "the second camera's page saying the node has no transcode left", func() bool {
		s2 = read(b2)
		return s2.Reason != ""
	})
	if s2.Reason != "transcode-capacity" || !strings.Contains(s2.Why, "503") {
		t.Errorf("second camera: reason %q, WebRTC %q; want transcode-capacity after a 503", s2.Reason, s2.Why)
	}
	if m := scrapeMetrics(t, a.URL()+"/metrics")["vigia_live_transcode_refused_total"]; m < 1 {
		t.Errorf("vigia_live_transcode_refused_total = %v; want at least 1", m)
	}

	// The viewer leaves: the transcoder stops.
	if err := chromedp.Run(b.Ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 20*time.Second, "the transcoder stopping once its viewer left", func() bool { return transcodes() == 0 })
}
