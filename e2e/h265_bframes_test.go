package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/live/transcode"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// TestH265BFramesFromMediaMTXInChromium: an H.265 camera with B-frames,
// published by FFmpeg through MediaMTX, plays in headless Chromium (no
// H.265) live over WebRTC from the node's transcoder and recorded from the
// H.264 renditions of its segments, each advancing 3 s, and a seek plays
// from its target.
func TestH265BFramesFromMediaMTXInChromium(t *testing.T) {
	t.Parallel()
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	// 90 s of H.265 with B-frames, encoded once and kept in the clip cache.
	args := append([]string{"-f", "lavfi", "-i", "testsrc2=size=640x360:rate=15", "-t", "90"}, x265(3, "")...)
	clip, err := testenv.CachedClip(fmt.Sprint(args), "h265-b-90s", ".mkv", func(out string) error {
		return ffmpegRun(append(args, "-pix_fmt", "yuv420p", out)...)
	})
	if err != nil {
		t.Fatal(err)
	}
	mtx := startMediaMTX(t)
	publish(t, clip, mtx.rtsp+"/cam", "-f", "rtsp", "-rtsp_transport", "tcp")
	testenv.WaitFor(t, 20*time.Second, "ffmpeg publishing", func() bool { return mtx.publishing("cam") })

	m := testenv.SharedMinIO(t)
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "cam", URL: mtx.rtsp + "/cam", Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	mux := http.NewServeMux()
	mux.Handle("GET /api/player/", http.StripPrefix("/api/player", player.Assets()))
	mux.Handle("GET /api/camera/{id}/vod.m3u8", player.VODHandler(player.VODConfig{
		Catalogue: catalogue.New(catalogue.Config{Store: st}), Sign: st.SignedURL,
		Rendition: func(r *http.Request, key string) (string, string) {
			u := "/api/camera/" + r.PathValue("id") + "/h264?key=" + url.QueryEscape(key)
			return u + "&part=init", u + "&part=media"
		},
	}))
	mux.Handle("GET /api/camera/{id}/h264", player.RenditionHandler(player.RenditionConfig{
		Open: func(ctx context.Context, key string) (io.ReadCloser, error) { return st.Get(ctx, key, 0, -1) },
		Transcode: func(seg []byte) ([]byte, error) {
			out, err := transcode.Segment(seg, transcode.Options{})
			if errors.Is(err, transcode.ErrNotH265) {
				return nil, nil
			}
			return out, err
		},
	}))
	mux.HandleFunc("GET /api/camera/{id}/player", func(w http.ResponseWriter, r *http.Request) {
		q, err := player.ParseQuery(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		id := r.PathValue("id")
		player.Page(w, r, player.Params{CameraID: id, CameraName: id, LiveURL: a.WHEPURL(id, time.Now().Add(time.Hour)),
			VODURL: "/api/camera/" + id + "/vod.m3u8?x=1", AssetsURL: "/api/player/", Query: q})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	segs := waitSegments(t, st, "cam", 4, 60*time.Second)

	b := headless.Chromium(t)
	type state struct {
		Transport string  `json:"transport"`
		Rendition string  `json:"rendition"`
		Reason    string  `json:"reason"`
		Time      float64 `json:"time"`
		Wall      float64 `json:"wall"`
	}
	read := func() state {
		var s state
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`({transport: document.body.dataset.transport || '',
  rendition: document.body.dataset.rendition || '', reason: document.body.dataset.unplayable || '',
  time: document.getElementById('video').currentTime, wall: Number(document.getElementById('clock').dataset.ms || 0)})`, &s)); err != nil {
			t.Fatalf("read page: %v", err)
		}
		if s.Reason != "" {
			t.Fatalf("the page cannot play: %s", s.Reason)
		}
		return s
	}
	play := func(what, query string) state {
		t.Helper()
		if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+"/api/camera/cam/player?"+query)); err != nil {
			t.Fatal(err)
		}
		var first state
		testenv.WaitFor(t, 25*time.Second, what+": the video advancing 3 s", func() bool {
			s := read()
			if first.Time == 0 {
				first = s
			}
			return s.Time > 0 && s.Time-first.Time >= 3
		})
		return read()
	}
	if s := play("live", "ts=0"); s.Transport != "webrtc" {
		t.Errorf("live transport %q; want webrtc", s.Transport)
	}
	if s := play("recorded", fmt.Sprintf("ts=%d&delay=0", segs[0].StartMs/1000+1)); s.Rendition != "h264" {
		t.Errorf("recorded without H.264 renditions (dataset.rendition %q)", s.Rendition)
	}
	target := segs[3].StartMs + 500
	var ignored any
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(fmt.Sprintf(`window.vigiaPlayer.seekWall(%d); 0`, target), &ignored)); err != nil {
		t.Fatal(err)
	}
	var at state
	testenv.WaitFor(t, 25*time.Second, "playing from the seek target", func() bool {
		at = read()
		return at.Wall >= float64(target) && at.Wall < float64(target+3000)
	})
	testenv.WaitFor(t, 25*time.Second, "playing on after the seek", func() bool { return read().Wall-at.Wall >= 1000 })
}
