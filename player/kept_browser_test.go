package player

import (
	"bytes"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// TestKeptSpanInChromium: video recorded before the camera's history_days
// (kept around events) is drawn in the kept colour with data-kept, the
// rest in the recorded green (checked in a screenshot).
func TestKeptSpanInChromium(t *testing.T) {
	if !HasBundle() {
		t.Fatal("hls.js is not bundled: run make deps-npm")
	}
	ts := newTestServer(t)
	const cam = "cam-kept"
	start := time.Now().Add(-6 * time.Minute).Truncate(time.Second)
	record(t, ts.store, cam, start, 4*time.Minute, 5*time.Second)
	retained := start.Add(2 * time.Minute)
	cat := catalogue.New(catalogue.Config{Store: ts.store})
	ts.mux.Handle("GET /api/player/", http.StripPrefix("/api/player", Assets()))
	ts.mux.Handle("GET /api/camera/{id}/vod.m3u8", VODHandler(VODConfig{Catalogue: cat, Sign: ts.store.SignedURL}))
	ts.mux.Handle("GET /api/camera/{id}/player/timeline", TimelineHandler(TimelineConfig{Catalogue: cat,
		RetainedFrom: func(string) time.Time { return retained }}))
	ts.mux.HandleFunc("GET /api/camera/{id}/player", func(w http.ResponseWriter, r *http.Request) {
		q, err := ParseQuery(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		id := r.PathValue("id")
		Page(w, r, Params{CameraID: id, CameraName: "Kept",
			VODURL:      "/api/camera/" + id + "/vod.m3u8?player_digest=d1",
			TimelineURL: "/api/camera/" + id + "/player/timeline?player_digest=d1",
			AssetsURL:   "/api/player/", Query: q})
	})
	b := &browserPage{Browser: headless.Chromium(t), t: t}
	q := url.Values{"ts": {strconv.FormatInt(start.Add(3*time.Minute).Unix(), 10)}, "timeline_interval": {"10"}}
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(ts.URL+"/api/camera/"+cam+"/player?"+q.Encode())); err != nil {
		t.Fatal(err)
	}
	var kept []string
	testenv.WaitFor(t, 30*time.Second, "the kept span drawn", func() bool {
		_ = chromedp.Run(b.Ctx, chromedp.Evaluate(`[...document.querySelectorAll('#tl-recorded .tl-kept')].map(e => e.dataset.kept + ' ' + e.dataset.end)`, &kept))
		return len(kept) > 0
	})
	if want := "1 " + strconv.FormatInt(retained.UnixMilli(), 10); kept[len(kept)-1] != want {
		t.Errorf("kept spans %v, want the last to end where history_days begin (%s)", kept, want)
	}
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`document.getElementById('video').pause(); document.getElementById('tl-cursor').style.visibility = 'hidden'`, nil)); err != nil {
		t.Fatal(err)
	}
	r := b.timelineRect()
	var shot []byte
	if err := chromedp.Run(b.Ctx, chromedp.Screenshot("#timeline", &shot, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("VIGIA_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "timeline-kept.png"), shot, 0o644)
	}
	scale := float64(img.Bounds().Dx()) / r.W
	y := 25 * scale
	if got := pixel(img, r.x(start.Add(time.Minute).UnixMilli())*scale, y); !near(got, [3]float64{0xf9, 0xa8, 0x25}, 10) {
		t.Errorf("kept video: colour %v, want amber", got)
	}
	if got := pixel(img, r.x(start.Add(3*time.Minute).UnixMilli())*scale, y); !near(got, [3]float64{0x2e, 0x7d, 0x32}, 10) {
		t.Errorf("video within history_days: colour %v, want the recorded green", got)
	}
}
