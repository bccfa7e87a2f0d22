package player

import (
	"bytes"
	"context"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// TestEventMarksInChromium: the camera's events of the visible range are
// drawn on the timeline at their times in their type's colour (checked in
// a screenshot), a plate read with its plate on hover; an event outside
// the range is not drawn.
func TestEventMarksInChromium(t *testing.T) {
	if !HasBundle() {
		t.Fatal("hls.js is not bundled: run make deps-npm")
	}
	ts := newTestServer(t)
	const cam = "cam-marks"
	start := time.Now().Add(-6 * time.Minute).Truncate(time.Second)
	record(t, ts.store, cam, start, 4*time.Minute, 5*time.Second)
	cat := catalogue.New(catalogue.Config{Store: ts.store})
	marks := []Event{
		{AtMs: start.Add(30 * time.Second).UnixMilli(), Type: 5, Description: "motion detection"},
		{AtMs: start.Add(90 * time.Second).UnixMilli(), Type: 7, Description: "license plate recognition (LPR)", Label: "BRA2E19"},
		{AtMs: start.Add(150 * time.Second).UnixMilli(), Type: 1, Description: "camera alert"},
	}
	outside := Event{AtMs: start.Add(-3 * time.Hour).UnixMilli(), Type: 2, Description: "panic"}
	ts.mux.Handle("GET /api/player/", http.StripPrefix("/api/player", Assets()))
	ts.mux.Handle("GET /api/camera/{id}/vod.m3u8", VODHandler(VODConfig{Catalogue: cat, Sign: ts.store.SignedURL}))
	ts.mux.Handle("GET /api/camera/{id}/player/timeline", TimelineHandler(TimelineConfig{Catalogue: cat,
		Events: func(_ context.Context, _ string, from, to time.Time) ([]Event, error) {
			// The outside event too: the page must draw only its range.
			return append([]Event{outside}, marks...), nil
		}}))
	ts.mux.HandleFunc("GET /api/camera/{id}/player", func(w http.ResponseWriter, r *http.Request) {
		q, err := ParseQuery(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		id := r.PathValue("id")
		Page(w, r, Params{CameraID: id, CameraName: "Marks",
			VODURL:      "/api/camera/" + id + "/vod.m3u8?player_digest=d1",
			TimelineURL: "/api/camera/" + id + "/player/timeline?player_digest=d1",
			AssetsURL:   "/api/player/", Query: q})
	})
	b := &browserPage{Browser: headless.Chromium(t), t: t}
	q := url.Values{"ts": {strconv.FormatInt(start.Add(2*time.Minute).Unix(), 10)}, "timeline_interval": {"10"}}
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(ts.URL+"/api/camera/"+cam+"/player?"+q.Encode())); err != nil {
		t.Fatal(err)
	}
	var drawn []string
	testenv.WaitFor(t, 30*time.Second, "the event marks drawn", func() bool {
		_ = chromedp.Run(b.Ctx, chromedp.Evaluate(`[...document.querySelectorAll('#tl-events .tl-event')].map(e => e.dataset.at + ' ' + e.dataset.type + ' ' + e.title)`, &drawn))
		return len(drawn) > 0
	})
	if len(drawn) != len(marks) {
		t.Fatalf("marks %q, want the %d events of the range", drawn, len(marks))
	}
	for i, m := range marks {
		if !strings.HasPrefix(drawn[i], strconv.FormatInt(m.AtMs, 10)+" "+strconv.Itoa(m.Type)+" "+m.Description) {
			t.Errorf("mark %d: %q, want event %+v", i, drawn[i], m)
		}
	}
	if !strings.Contains(drawn[1], "BRA2E19") {
		t.Errorf("the plate read's mark says %q on hover, want its plate", drawn[1])
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
		_ = os.WriteFile(filepath.Join(dir, "timeline-events.png"), shot, 0o644)
	}
	scale := float64(img.Bounds().Dx()) / r.W
	y := 15 * scale // inside the marks' band (12 to 18 px)
	colours := map[int][3]float64{5: {0xff, 0xee, 0x58}, 7: {0x26, 0xc6, 0xda}, 1: {0xff, 0x70, 0x43}}
	for _, m := range marks {
		if got := pixel(img, r.x(m.AtMs)*scale, y); !near(got, colours[m.Type], 12) {
			t.Errorf("event of type %d: colour %v, want %v", m.Type, got, colours[m.Type])
		}
		// 15 s later, no mark: the timeline's background.
		if got := pixel(img, r.x(m.AtMs+15000)*scale, y); !near(got, [3]float64{0x1b, 0x1b, 0x1b}, 12) {
			t.Errorf("15 s after the event of type %d: colour %v, want the background", m.Type, got)
		}
	}
}
