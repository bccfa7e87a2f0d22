package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// playInChromium plays camera's recording from the start of seg in the
// player page with hls.js in headless Chromium (VOD playlist from storage,
// segments read from MinIO through signed URLs) until its clock has
// advanced by 3 s, across a segment boundary.
func playInChromium(t *testing.T, st storage.Store, camera string, seg stored) {
	t.Helper()
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	mux := http.NewServeMux()
	mux.Handle("GET /api/player/", http.StripPrefix("/api/player", player.Assets()))
	mux.Handle("GET /api/camera/{id}/vod.m3u8", player.VODHandler(player.VODConfig{Catalogue: catalogue.New(catalogue.Config{Store: st}), Sign: st.SignedURL}))
	mux.HandleFunc("GET /api/camera/{id}/player", func(w http.ResponseWriter, r *http.Request) {
		q, err := player.ParseQuery(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		id := r.PathValue("id")
		player.Page(w, r, player.Params{CameraID: id, CameraName: id,
			VODURL: "/api/camera/" + id + "/vod.m3u8?x=1", AssetsURL: "/api/player/", Query: q})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b := headless.Chromium(t)
	// Recorded playback starts at ts - delay, whole seconds.
	ts := seg.StartMs/1000 + 1
	page := fmt.Sprintf("%s/api/camera/%s/player?ts=%d&delay=0", srv.URL, camera, ts)
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	type state struct {
		State   string  `json:"state"`
		Playing string  `json:"playing"`
		Time    float64 `json:"time"`
		Error   string  `json:"error"`
	}
	read := func() state {
		var s state
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`(() => { const v = document.getElementById('video');
  return {state: document.body.dataset.state || '', playing: document.body.dataset.playing || '',
          time: v.currentTime, error: v.error ? String(v.error.code) + ' ' + v.error.message : ''}; })()`, &s)); err != nil {
			t.Fatalf("read page state: %v", err)
		}
		return s
	}
	var start state
	testenv.WaitFor(t, 60*time.Second, camera+" playing in chromium", func() bool {
		start = read()
		if start.Error != "" {
			t.Fatalf("%s: the video element failed: %s", camera, start.Error)
		}
		return start.State == "recorded" && start.Playing == "1"
	})
	// 3 s of the recording within a minute: make test runs the matrix at
	// nice 10 beside tests that measure, which take the CPU first.
	testenv.WaitFor(t, 60*time.Second, camera+" playing on for 3 s in chromium", func() bool {
		s := read()
		if s.Error != "" {
			t.Fatalf("%s: the video element failed: %s", camera, s.Error)
		}
		return s.Time-start.Time >= 3
	})
}
