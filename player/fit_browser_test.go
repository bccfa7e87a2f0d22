package player

import (
	"bytes"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// TestTimelineFitsNewCamera: a live page opened without timeline_interval
// for a camera that has recorded for four minutes opens its timeline on
// the 10-minute window, where the recording fills a good part of it (a
// screenshot's recorded green), not on the default 24 hours, where it
// would be a sliver; with timeline_interval given, the window asked for
// stays.
func TestTimelineFitsNewCamera(t *testing.T) {
	if !HasBundle() {
		t.Fatal("hls.js is not bundled: run make deps-npm")
	}
	ts := newTestServer(t)
	mountPlayer(ts, "")
	const cam = "cam-new"
	began := time.Now().Add(-4 * time.Minute).Truncate(time.Second)
	record(t, ts.store, cam, began, 4*time.Minute-5*time.Second, 5*time.Second)
	b := &browserPage{Browser: headless.Chromium(t), t: t}

	var tl struct {
		Span   float64
		Fit    string
		Loaded string
	}
	read := func() {
		_ = chromedp.Run(b.Ctx, chromedp.Evaluate(`(() => { const t = document.getElementById('timeline');
			return {Span: Number(t.dataset.to) - Number(t.dataset.from), Fit: document.body.dataset.fitWindow || '',
				Loaded: t.dataset.loaded || ''}; })()`, &tl))
	}
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(ts.URL+"/api/camera/"+cam+"/player")); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 15*time.Second, "the timeline fitted to the recording", func() bool {
		read()
		return tl.Fit != "" && tl.Loaded != ""
	})
	if tl.Span != float64(10*time.Minute/time.Millisecond) || tl.Fit != "600000" {
		t.Fatalf("window %.0f ms (fitted to %s), want 10 minutes", tl.Span, tl.Fit)
	}
	var label string
	if err := chromedp.Run(b.Ctx, chromedp.Text("#window-label", &label, chromedp.ByQuery)); err != nil || label != "10 min" {
		t.Errorf("window label %q, %v", label, err)
	}
	testenv.WaitFor(t, 10*time.Second, "the recording drawn in the fitted window", func() bool {
		var n int
		_ = chromedp.Run(b.Ctx, chromedp.Evaluate(`document.querySelectorAll('#tl-recorded .tl-rec').length`, &n))
		return n > 0
	})
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`document.getElementById('tl-cursor').style.visibility = 'hidden'`, nil)); err != nil {
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
		_ = os.WriteFile(filepath.Join(dir, "timeline-fit.png"), shot, 0o644)
	}
	scale := float64(img.Bounds().Dx()) / r.W
	green := 0
	for x := 0; x < img.Bounds().Dx(); x++ {
		if near(pixel(img, float64(x), 25*scale), [3]float64{0x2e, 0x7d, 0x32}, 10) {
			green++
		}
	}
	// Four minutes of ten: about 40 % of the width.
	if share := float64(green) / float64(img.Bounds().Dx()); share < 0.3 || share > 0.5 {
		t.Errorf("recorded green over %.0f %% of the timeline, want about 40 %%", share*100)
	}

	// Asked for 24 hours: 24 hours it is.
	q := url.Values{"timeline_interval": {"24"}}
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(ts.URL+"/api/camera/"+cam+"/player?"+q.Encode())); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 15*time.Second, "the timeline loaded", func() bool {
		read()
		return tl.Loaded != ""
	})
	if read(); tl.Span != float64(24*time.Hour/time.Millisecond) || tl.Fit != "" {
		t.Errorf("with timeline_interval=24: window %.0f ms, fitted %q", tl.Span, tl.Fit)
	}
}
