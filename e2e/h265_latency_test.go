package e2e

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// TestH265TranscodedLatencyInChromium measures, in headless Chromium over
// WebRTC, the glass-to-glass latency of two 720p15 stamp cameras recorded
// by one node: one in H.264, sent as it comes, and one in H.265, which the
// browser cannot decode and gets through the node's transcoder. It also
// measures the time from opening the page to the first picture. It prints
// both (docs/live.md, docs/benchmarks.md); it asserts that both played
// stamped frames, not how fast.
func TestH265TranscodedLatencyInChromium(t *testing.T) {
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	m := testenv.SharedMinIO(t)
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	for _, codec := range []string{synth.CodecH264, synth.CodecH265} {
		cam, err := synth.StartStampCamera(synth.StampConfig{Codec: codec, Width: 1280, Height: 720, FPS: 15})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cam.Close)
		if err := a.RecordCamera(ingest.Camera{ID: codec, URL: cam.URL(), Trusted: true}); err != nil {
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
	// Both cameras have pictures before either page opens.
	st := openS3(t, c)
	waitSegments(t, st, synth.CodecH264, 1, 60*time.Second)
	waitSegments(t, st, synth.CodecH265, 1, 60*time.Second)

	b := headless.Chromium(t)
	eval := func(js string, out any) {
		t.Helper()
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(js, out)); err != nil {
			t.Fatalf("evaluate %.60q: %v", js, err)
		}
	}
	for _, codec := range []string{synth.CodecH264, synth.CodecH265} {
		opened := time.Now()
		if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+"/player/"+codec)); err != nil {
			t.Fatal(err)
		}
		var first time.Duration
		testenv.WaitFor(t, 30*time.Second, codec+" live playback over WebRTC", func() bool {
			var s struct {
				Transport string  `json:"transport"`
				Time      float64 `json:"time"`
				Reason    string  `json:"reason"`
			}
			eval(`({transport: document.body.dataset.transport || '', time: document.getElementById('video').currentTime,
				reason: document.body.dataset.unplayable || ''})`, &s)
			if s.Reason != "" {
				t.Fatalf("%s: the page cannot play: %s", codec, s.Reason)
			}
			if s.Time > 0 && first == 0 {
				first = time.Since(opened)
			}
			return s.Transport == "webrtc" && s.Time > 0
		})
		var ignored any
		eval(synth.StampReaderJS+`
			window.vigiaLat = []; window.vigiaUnstamped = 0;
			(function () {
			  var v = document.getElementById('video'), cv = document.createElement('canvas');
			  function f(now, md) {
			    var s = vigiaReadStamp(v, cv);
			    if (s === null) { vigiaUnstamped++; } else { vigiaLat.push(performance.timeOrigin + md.expectedDisplayTime - s); }
			    v.requestVideoFrameCallback(f);
			  }
			  v.requestVideoFrameCallback(f);
			})();
			0`, &ignored)
		var lat []float64
		var unstamped int
		deadline := time.Now().Add(60 * time.Second)
		for len(lat) < 60 {
			eval(`window.vigiaLat`, &lat)
			eval(`window.vigiaUnstamped`, &unstamped)
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d stamped frames and %d unstamped within 60 s; want 60 stamped", codec, len(lat), unstamped)
			}
			time.Sleep(200 * time.Millisecond) // polling the page
		}
		if unstamped > len(lat)/10 {
			t.Errorf("%s: %d frames without a readable stamp for %d with one", codec, unstamped, len(lat))
		}
		slices.Sort(lat)
		q := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		t.Logf("%s 720p15 over WebRTC: first picture %v after opening the page; glass-to-glass over %d frames: p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms",
			codec, first.Round(10*time.Millisecond), len(lat), q(0.5), q(0.9), q(0.99), lat[len(lat)-1])
	}
}
