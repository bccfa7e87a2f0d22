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
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// TestH265RecordedInChromium: an H.265 camera's recordings play in
// headless Chromium, which decodes no H.265: hls.js refuses the stored
// segments, the page asks for the playlist of H.264 renditions
// (player.RenditionHandler, each segment transcoded on first request and
// cached), plays it for 3 s, and a seek to a later segment plays from
// there.
func TestH265RecordedInChromium(t *testing.T) {
	t.Parallel()
	if !player.HasBundle() {
		t.Fatal("hls.js bundle missing: run make deps")
	}
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "cam", Codec: synth.CodecH265, Small: true})
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "cam", URL: cam.URL("cam"), Trusted: true}); err != nil {
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
		player.Page(w, r, player.Params{CameraID: id, CameraName: id,
			VODURL: "/api/camera/" + id + "/vod.m3u8?x=1", AssetsURL: "/api/player/", Query: q})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	segs := waitSegments(t, st, "cam", 4, 90*time.Second)

	b := headless.Chromium(t)
	page := fmt.Sprintf("%s/api/camera/cam/player?ts=%d&delay=0", srv.URL, segs[0].StartMs/1000+1)
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	type state struct {
		State     string  `json:"state"`
		Playing   string  `json:"playing"`
		Rendition string  `json:"rendition"`
		Reason    string  `json:"reason"`
		Time      float64 `json:"time"`
		Wall      float64 `json:"wall"`
	}
	read := func() state {
		var s state
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`(() => { const v = document.getElementById('video');
  return {state: document.body.dataset.state || '', playing: document.body.dataset.playing || '',
    rendition: document.body.dataset.rendition || '', reason: document.body.dataset.unplayable || '',
    time: v.currentTime, wall: Number(document.getElementById('clock').dataset.ms || 0)}; })()`, &s)); err != nil {
			t.Fatalf("read page: %v", err)
		}
		if s.Reason != "" {
			t.Fatalf("the page cannot play: %s", s.Reason)
		}
		return s
	}
	var start state
	testenv.WaitFor(t, 30*time.Second, "the recording playing from its H.264 renditions", func() bool {
		start = read()
		return start.State == "recorded" && start.Playing == "1" && start.Time > 0
	})
	if start.Rendition != "h264" {
		t.Fatalf("playing without renditions (dataset.rendition %q): does this browser decode H.265?", start.Rendition)
	}
	testenv.WaitFor(t, 25*time.Second, "the recording advancing 3 s", func() bool { return read().Time-start.Time >= 3 })

	// A seek to the last segment plays from there.
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
