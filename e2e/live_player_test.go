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

// TestLivePlaybackInChromium: the player page plays a camera's live LL-HLS
// from the node recording it, with hls.js in headless Chromium.
func TestLivePlaybackInChromium(t *testing.T) {
	t.Parallel()
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "cam", Codec: "h264", Audio: true})
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "cam", URL: cam.URL("cam"), Sound: true, Trusted: true}); err != nil {
		t.Fatal(err)
	}
	liveURL := a.LiveURL("cam", time.Now().Add(time.Hour))
	mux := http.NewServeMux()
	mux.Handle("GET /api/player/", http.StripPrefix("/api/player", player.Assets()))
	mux.HandleFunc("GET /player", func(w http.ResponseWriter, r *http.Request) {
		q, err := player.ParseQuery(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		player.Page(w, r, player.Params{CameraID: "cam", CameraName: "cam", LiveURL: liveURL, VODURL: "/vod.m3u8?x=1", AssetsURL: "/api/player/", Query: q})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b := headless.Chromium(t)
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+"/player?ts=0")); err != nil {
		t.Fatal(err)
	}
	read := func() float64 {
		var ct float64
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`document.getElementById('video').currentTime`, &ct)); err != nil {
			t.Fatalf("read currentTime: %v", err)
		}
		return ct
	}
	var start float64
	testenv.WaitFor(t, 30*time.Second, "live playback to start", func() bool {
		start = read()
		return start > 0
	})
	testenv.WaitFor(t, 15*time.Second, "live currentTime advancing by 3 s", func() bool {
		return read()-start >= 3
	})
}
