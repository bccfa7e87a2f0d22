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

// latencySamples is how many displayed frames each transport is measured
// on (5 s at 30 frames a second).
const latencySamples = 150

// TestLiveLatencyInChromium: the player page in headless Chromium plays a
// camera live over WebRTC (WHEP) and, given the LL-HLS address, over
// LL-HLS. The camera is synth's stamp camera, pulled over RTSP and
// recorded by the node like any other: each picture shows the wall-clock
// time it was made, and the page reads it back from every frame it shows
// (requestVideoFrameCallback, canvas): display time minus stamp is the
// glass-to-glass latency on loopback, encoding and ingest included. The
// test prints both distributions (docs/live.md); it asserts that each
// transport played and showed stamped frames, not how fast.
func TestLiveLatencyInChromium(t *testing.T) {
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	m := testenv.SharedMinIO(t)
	cam, err := synth.StartStampCamera(synth.StampConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cam.Close)
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "stamp", URL: cam.URL(), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(time.Hour)
	urls := map[string]string{"webrtc": a.WHEPURL("stamp", exp), "hls": a.LiveURL("stamp", exp)}
	mux := http.NewServeMux()
	mux.Handle("GET /api/player/", http.StripPrefix("/api/player", player.Assets()))
	mux.HandleFunc("GET /player", func(w http.ResponseWriter, r *http.Request) {
		player.Page(w, r, player.Params{CameraID: "stamp", CameraName: "stamp", LiveURL: urls[r.URL.Query().Get("kind")],
			VODURL: "/vod.m3u8?x=1", AssetsURL: "/api/player/"})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	b := headless.Chromium(t)
	eval := func(js string, out any) {
		t.Helper()
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(js, out)); err != nil {
			t.Fatalf("evaluate %.60q: %v", js, err)
		}
	}
	measure := func(kind string) []float64 {
		if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+"/player?kind="+kind)); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 30*time.Second, kind+" live playback", func() bool {
			var st struct {
				Transport string  `json:"transport"`
				Time      float64 `json:"time"`
			}
			eval(`({transport: document.body.dataset.transport || '', time: document.getElementById('video').currentTime})`, &st)
			return st.Transport == kind && st.Time > 0
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
		testenv.WaitFor(t, 30*time.Second, kind+" stamped frames", func() bool {
			eval(`window.vigiaLat`, &lat)
			return len(lat) >= latencySamples
		})
		var unstamped int
		eval(`window.vigiaUnstamped`, &unstamped)
		if unstamped > len(lat)/10 {
			t.Errorf("%s: %d frames without a readable stamp for %d with one", kind, unstamped, len(lat))
		}
		return lat
	}
	for _, kind := range []string{"webrtc", "hls"} {
		lat := measure(kind)
		slices.Sort(lat)
		q := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		t.Logf("glass-to-glass latency over %s, %d frames: p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms",
			kind, len(lat), q(0.5), q(0.9), q(0.99), lat[len(lat)-1])
	}
	checkSealedByNode(t, a.URL())
}

// checkSealedByNode fails t unless the node sealed the WebRTC video it
// sent (docs/live.md, Sending), pion none.
func checkSealedByNode(t *testing.T, app string) {
	t.Helper()
	mt := scrapeMetrics(t, app+"/metrics")
	node, pion := mt[`vigia_live_webrtc_packets_total{sealed_by="node"}`], mt[`vigia_live_webrtc_packets_total{sealed_by="pion"}`]
	if node == 0 || pion != 0 {
		t.Errorf("WebRTC video packets sealed by the node %v, by pion %v: want all by the node", node, pion)
	}
}
