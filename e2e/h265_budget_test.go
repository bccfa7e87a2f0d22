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

// TestH265TranscodeBudgetKeepsRecording: a node transcoding its whole
// budget (webrtc.transcode_max 2: two 720p15 H.265 cameras watched live in
// headless Chromium, which decodes no H.265) records both cameras without
// losing a frame: the segments written meanwhile are continuous, every
// frame in place, and the recorder counts no dropped frame.
func TestH265TranscodeBudgetKeepsRecording(t *testing.T) {
	t.Parallel()
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	m := testenv.SharedMinIO(t)
	ids := []string{"cam1", "cam2"}
	cams := startSynth(t, synth.CameraSpec{Path: ids[0], Codec: synth.CodecH265}, synth.CameraSpec{Path: ids[1], Codec: synth.CodecH265})
	c := s3Config(t, m)
	c.WebRTC.TranscodeMax = 2
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	for _, id := range ids {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: cams.URL(id), Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	st := openS3(t, c)
	first := map[string]int{}
	for _, id := range ids {
		first[id] = len(waitSegments(t, st, id, 1, 30*time.Second))
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

	for _, id := range ids {
		b := headless.Chromium(t)
		if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+"/player/"+id)); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 30*time.Second, id+" playing live over WebRTC", func() bool {
			var s struct {
				Transport string  `json:"transport"`
				Time      float64 `json:"time"`
				Reason    string  `json:"reason"`
			}
			if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`({transport: document.body.dataset.transport || '',
				time: document.getElementById('video').currentTime, reason: document.body.dataset.unplayable || ''})`, &s)); err != nil {
				t.Fatal(err)
			}
			if s.Reason != "" {
				t.Fatalf("%s: the page cannot play: %s", id, s.Reason)
			}
			return s.Transport == "webrtc" && s.Time > 1
		})
	}
	if n := scrapeMetrics(t, a.URL()+"/metrics")["vigia_live_transcodes"]; n != 2 {
		t.Fatalf("vigia_live_transcodes = %v; want 2 (the budget)", n)
	}
	// Four more segments of each camera recorded while both are transcoded.
	for _, id := range ids {
		segs := waitSegments(t, st, id, first[id]+4, 60*time.Second)
		auditRecording(t, st, segs[first[id]:], wantSegments{Codec: "hevc", Width: 1280, Height: 720, FrameInterval: frameInterval})
	}
	mt := scrapeMetrics(t, a.URL()+"/metrics")
	for _, r := range []string{"queue_full", "no_keyframe", "no_params", "spool_write"} {
		if v := mt[`vigia_dropped_frames_total{reason="`+r+`"}`]; v != 0 {
			t.Errorf("recorder dropped %v frames (%s) while transcoding its budget", v, r)
		}
	}
	t.Logf("transcoders dropped %v frames, failed %v", mt["vigia_live_transcode_dropped_frames_total"], mt["vigia_live_transcode_errors_total"])
}
