package e2e

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// TestLiveWebRTCFallback: handed a WHEP address the node does not answer
// (webrtc.enabled off), the player page falls back to the LL-HLS playlist
// beside it, plays, and says it plays HLS.
func TestLiveWebRTCFallback(t *testing.T) {
	t.Parallel()
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "cam", Codec: "h264", Small: true})
	c := s3Config(t, m)
	c.WebRTC.Enabled = false
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "cam", URL: cam.URL("cam"), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	whep := a.WHEPURL("cam", time.Now().Add(time.Hour))
	mux := http.NewServeMux()
	mux.Handle("GET /api/player/", http.StripPrefix("/api/player", player.Assets()))
	mux.HandleFunc("GET /player", func(w http.ResponseWriter, r *http.Request) {
		player.Page(w, r, player.Params{CameraID: "cam", CameraName: "cam", LiveURL: whep, VODURL: "/vod.m3u8?x=1", AssetsURL: "/api/player/"})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	b := headless.Chromium(t)
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+"/player")); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Transport string  `json:"transport"`
		Badge     string  `json:"badge"`
		Why       string  `json:"why"`
		Time      float64 `json:"time"`
	}
	testenv.WaitFor(t, 40*time.Second, "live playback over LL-HLS", func() bool {
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`({transport: document.body.dataset.transport || '',
			badge: document.getElementById('mode').textContent, why: document.body.dataset.webrtcError || '',
			time: document.getElementById('video').currentTime})`, &st)); err != nil {
			t.Fatal(err)
		}
		return st.Transport == "hls" && st.Time > 1
	})
	if st.Badge != "Live · HLS" || st.Why == "" {
		t.Errorf("badge %q, WebRTC failure %q; want Live · HLS and a reason", st.Badge, st.Why)
	}
	t.Logf("fell back to LL-HLS: %s", st.Why)
}
