package export

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// videoState is what the page reports of its <video>.
type videoState struct {
	Ready    int     `json:"ready"`
	Duration float64 `json:"duration"`
	Time     float64 `json:"time"`
	Error    int     `json:"error"`
	Width    int     `json:"width"`
}

const readVideo = `(() => { const v = document.getElementById('v');
  return {ready: v.readyState, duration: isFinite(v.duration) ? v.duration : -1, time: v.currentTime,
          error: v.error ? v.error.code : 0, width: v.videoWidth}; })()`

// TestExportPlaysInChromium plays an exported H.264+AAC clip with a gap in
// Chromium's <video>: it loads with the full duration, plays, and plays on
// across the gap after a seek.
func TestExportPlaysInChromium(t *testing.T) {
	st := newFS(t)
	record(t, st, "7", "h264", true, 20*time.Second,
		recRun{t0, 40 * time.Second}, recRun{t0.Add(50 * time.Second), 40 * time.Second})
	c, err := Build(context.Background(), st, Request{Camera: "7", Start: t0.Add(5 * time.Second), End: t0.Add(85 * time.Second)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	path := writeClip(t, c)

	mux := http.NewServeMux()
	mux.HandleFunc("/clip.mp4", func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(path)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", "video/mp4")
		http.ServeContent(w, r, "clip.mp4", time.Time{}, f)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><video id="v" src="/clip.mp4" muted autoplay playsinline></video>`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	b := headless.Chromium(t)
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
		t.Fatal(err)
	}
	wait := func(what string, cond func(videoState) bool) videoState {
		t.Helper()
		var s videoState
		testenv.WaitForNil(t, 60*time.Second, what, func() error {
			s = videoState{}
			if err := chromedp.Run(b.Ctx, chromedp.Evaluate(readVideo, &s)); err != nil {
				t.Fatal(err)
			}
			if s.Error != 0 {
				t.Fatalf("%s: media error %d", what, s.Error)
			}
			if !cond(s) {
				return fmt.Errorf("video state %+v", s)
			}
			return nil
		})
		return s
	}
	s := wait("metadata", func(s videoState) bool { return s.Ready >= 1 && s.Duration > 0 })
	if d := time.Duration(s.Duration * float64(time.Second)); d < 79*time.Second || d > 83*time.Second {
		t.Errorf("duration in the browser %v, want about 80 s (gap included)", d)
	}
	if s.Width != 640 {
		t.Errorf("video width %d", s.Width)
	}
	wait("playback", func(s videoState) bool { return s.Time > 1 })
	// The gap is at [35 s, 45 s) of the clip: seek just before it and play across.
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`document.getElementById('v').currentTime = 33.5`, nil)); err != nil {
		t.Fatal(err)
	}
	wait("playback across the gap", func(s videoState) bool { return s.Time > 46 })
}
