package player

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// causeColors are the shades of timeline.js (CAUSES), as RGB and alpha.
var causeColors = map[status.Cause][4]float64{
	status.CauseCameraOffline: {229, 57, 53, 0.85},
	status.CauseNodeCrash:     {216, 27, 96, 0.85},
	status.CauseUnknown:       {97, 97, 97, 0.85},
}

// timelineFixture records minutes of the synthetic camera, then cuts three
// holes into them: one explained as camera_offline, one as node_crash, one
// explained by nothing; it stores a minute thumbnail for every minute and
// two events. It returns the recorded segments left.
type timelineFixture struct {
	start time.Time
	segs  []catalogue.Segment
	holes []struct {
		from, to int64
		cause    status.Cause
	}
}

func newTimelineFixture(t *testing.T, ts *testServer, cam string) *timelineFixture {
	t.Helper()
	f := &timelineFixture{start: time.Now().Add(-9 * time.Minute).Truncate(time.Second)}
	all := record(t, ts.store, cam, f.start, 4*time.Minute, 5*time.Second)
	ctx := context.Background()
	cut := func(i, j int, cause status.Cause) {
		from, to := all[i].StartMs, all[j].EndMs()
		for k := i; k <= j; k++ {
			if err := ts.store.Delete(ctx, []string{all[k].Key}); err != nil {
				t.Fatal(err)
			}
		}
		if cause != status.CauseUnknown {
			key := storage.GapKey(cam, time.UnixMilli(from), 0, string(cause))
			if err := ts.store.Put(ctx, key, strings.NewReader("{}"), 2, storage.PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		f.holes = append(f.holes, struct {
			from, to int64
			cause    status.Cause
		}{from, to, cause})
	}
	// Holes of 20 s or more, apart: at 40 s, 100 s and 160 s.
	cut(8, 11, status.CauseCameraOffline)
	cut(20, 23, status.CauseNodeCrash)
	cut(32, 35, status.CauseUnknown)
	cat := catalogue.New(catalogue.Config{Store: ts.store})
	segs, err := cat.Segments(ctx, cam, f.start, f.start.Add(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	f.segs = segs
	for m := f.start.Truncate(time.Minute); m.Before(f.start.Add(5 * time.Minute)); m = m.Add(time.Minute) {
		img := image.NewRGBA(image.Rect(0, 0, 160, 90))
		for i := range img.Pix {
			img.Pix[i] = byte(m.Minute() * 40)
		}
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, nil); err != nil {
			t.Fatal(err)
		}
		if err := ts.store.Put(ctx, storage.MinuteThumbKey(cam, m), bytes.NewReader(b.Bytes()), int64(b.Len()), storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ts.mu.Lock()
	ts.evs = []Event{{AtMs: f.start.Add(20 * time.Second).UnixMilli(), Type: 5, Description: "motion detection"},
		{AtMs: f.start.Add(130 * time.Second).UnixMilli(), Type: 1, Description: "camera alert"}}
	ts.mu.Unlock()
	return f
}

// timelineRect is the timeline's box in the page.
type timelineRect struct{ X, Y, W, H, From, To float64 }

func (b *browserPage) timelineRect() timelineRect {
	b.t.Helper()
	var r timelineRect
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`(() => { const t = document.getElementById('timeline'), r = t.getBoundingClientRect();
		return {X: r.left, Y: r.top, W: r.width, H: r.height, From: Number(t.dataset.from), To: Number(t.dataset.to)}; })()`, &r)); err != nil {
		b.t.Fatal(err)
	}
	return r
}

func (r timelineRect) x(ms int64) float64 { return (float64(ms) - r.From) / (r.To - r.From) * r.W }

// pixel returns the colour of the screenshot at x, y.
func pixel(img image.Image, x, y float64) [3]float64 {
	c := color.RGBAModel.Convert(img.At(int(x), int(y))).(color.RGBA)
	return [3]float64{float64(c.R), float64(c.G), float64(c.B)}
}

// over blends c of alpha a over the timeline's background (#1b1b1b).
func over(c [4]float64) [3]float64 {
	var out [3]float64
	for i := range 3 {
		out[i] = c[3]*c[i] + (1-c[3])*0x1b
	}
	return out
}

func near(a, b [3]float64, tol float64) bool {
	for i := range 3 {
		if d := a[i] - b[i]; d > tol || d < -tol {
			return false
		}
	}
	return true
}

// TestTimelineInChromium: the timeline of a recording with three gaps
// shades each at its place in its cause's colour (checked in a screenshot),
// says the cause on hover, marks the events, shows the minute thumbnails
// while the pointer moves over it, seeks where it is clicked, and zoomed
// out to three days still draws it.
func TestTimelineInChromium(t *testing.T) {
	if !HasBundle() {
		t.Fatal("hls.js is not bundled: run make deps-npm")
	}
	ts := newTestServer(t)
	mountPlayer(ts, "")
	const cam = "cam-tl"
	f := newTimelineFixture(t, ts, cam)
	b := &browserPage{Browser: headless.Chromium(t), t: t}
	q := url.Values{"ts": {strconv.FormatInt(f.start.Add(60*time.Second).Unix(), 10)}, "timeline_interval": {"10"}}
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(ts.URL+"/api/camera/"+cam+"/player?"+q.Encode())); err != nil {
		t.Fatal(err)
	}
	b.waitState(30*time.Second, "recorded playback", func(s pageState) bool { return s.State == "recorded" && s.Playing == "1" })
	var drawn int
	testenv.WaitFor(t, 15*time.Second, "the gaps drawn", func() bool {
		_ = chromedp.Run(b.Ctx, chromedp.Evaluate(`document.querySelectorAll('#tl-gaps .tl-gap').length`, &drawn))
		return drawn >= 3
	})
	// Freeze the picture: no cursor or window move while it is taken.
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
		_ = os.WriteFile(filepath.Join(dir, "timeline.png"), shot, 0o644)
	}
	scale := float64(img.Bounds().Dx()) / r.W
	y := 25 * scale // inside the spans' band (18 px to the bottom)
	for _, h := range f.holes {
		mid := (h.from + h.to) / 2
		got := pixel(img, r.x(mid)*scale, y)
		if want := over(causeColors[h.cause]); !near(got, want, 10) {
			t.Errorf("gap %s at x %.0f: colour %v, want %v", h.cause, r.x(mid), got, want)
		}
		// Just outside the gap, recorded video (green).
		if got := pixel(img, r.x(h.from-2500)*scale, y); !near(got, [3]float64{0x2e, 0x7d, 0x32}, 10) {
			t.Errorf("before the %s gap: colour %v, want the recorded green", h.cause, got)
		}
	}
	// Hover says the cause.
	var titles []string
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`[...document.querySelectorAll('#tl-gaps .tl-gap')].map(e => e.dataset.cause + '|' + e.title)`, &titles)); err != nil {
		t.Fatal(err)
	}
	wantTitles := map[string]string{"camera_offline": "Camera offline: ", "node_crash": "Recorder crashed: ", "unknown": "No record of why: "}
	for _, tt := range titles {
		c, title, _ := strings.Cut(tt, "|")
		if w, ok := wantTitles[c]; ok && !strings.HasPrefix(title, w) {
			t.Errorf("gap %s says %q on hover, want %q…", c, title, w)
		}
		delete(wantTitles, c)
	}
	if len(wantTitles) != 0 {
		t.Errorf("gaps not drawn: %v (drawn: %v)", wantTitles, titles)
	}
	// Event markers at their times.
	var marks []string
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`[...document.querySelectorAll('#tl-events .tl-event')].map(e => e.dataset.at + ' ' + e.dataset.type)`, &marks)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("[%d 5 %d 1]", f.start.Add(20*time.Second).UnixMilli(), f.start.Add(130*time.Second).UnixMilli())
	if fmt.Sprint(marks) != want {
		t.Errorf("event markers %v, want %s", marks, want)
	}

	// Moving the pointer over the timeline shows the minute thumbnails
	// around it, loaded.
	at := f.start.Add(150 * time.Second)
	if err := chromedp.Run(b.Ctx, chromedp.MouseEvent(input.MouseMoved, r.X+r.x(at.UnixMilli()), r.Y+r.H/2)); err != nil {
		t.Fatal(err)
	}
	var strip struct {
		Hidden bool    `json:"hidden"`
		Ms     float64 `json:"ms"`
		Loaded int     `json:"loaded"`
		At     float64 `json:"at"`
	}
	testenv.WaitFor(t, 10*time.Second, "the preview strip", func() bool {
		_ = chromedp.Run(b.Ctx, chromedp.Evaluate(`(() => { const p = document.getElementById('tl-preview');
			const imgs = [...p.querySelectorAll('img')];
			const at = p.querySelector('figure.at img');
			return {hidden: p.hidden, ms: Number(p.dataset.ms || 0), loaded: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
				at: at ? Number(at.dataset.ts) : 0}; })()`, &strip))
		return !strip.Hidden && strip.Loaded >= 3
	})
	if dir := os.Getenv("VIGIA_SCREENSHOTS"); dir != "" {
		var page []byte
		if err := chromedp.Run(b.Ctx, chromedp.FullScreenshot(&page, 100)); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "player.png"), page, 0o644)
		}
	}
	if d := strip.Ms - float64(at.UnixMilli()); d > 2000 || d < -2000 {
		t.Errorf("preview strip at %.0f, pointer at %d", strip.Ms, at.UnixMilli())
	}
	// The minute of the time under the pointer (a pixel is seconds wide:
	// near a minute's start it may point into the minute before).
	if want := time.UnixMilli(int64(strip.Ms)).Truncate(time.Minute).Unix(); int64(strip.At) != want {
		t.Errorf("the thumbnail under the pointer (%.0f) was taken at %.0f, want the minute's (%d)", strip.Ms, strip.At, want)
	}

	// A click plays from there.
	target := f.segs[len(f.segs)-3].StartMs + 1000
	if err := chromedp.Run(b.Ctx, chromedp.MouseClickXY(r.X+r.x(target), r.Y+r.H/2)); err != nil {
		t.Fatal(err)
	}
	b.waitState(15*time.Second, "playback at the clicked time", func(s pageState) bool {
		return s.WallMs >= float64(target-1500) && s.WallMs <= float64(target+5000)
	})
	b.waitAdvance("playback after the click")

	// Zoomed out to three days, the timeline still holds the recording.
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`window.vigiaPlayer.zoom(1); window.vigiaPlayer.zoom(1); window.vigiaPlayer.zoom(1)`, nil)); err != nil {
		t.Fatal(err)
	}
	var z struct {
		Label string  `json:"label"`
		Span  float64 `json:"span"`
		Recs  int     `json:"recs"`
	}
	testenv.WaitFor(t, 15*time.Second, "the three-day window", func() bool {
		_ = chromedp.Run(b.Ctx, chromedp.Evaluate(`(() => { const t = document.getElementById('timeline');
			return {label: document.getElementById('window-label').textContent, span: Number(t.dataset.to) - Number(t.dataset.from),
				recs: document.querySelectorAll('#tl-recorded .tl-rec').length}; })()`, &z))
		return z.Label == "3 d" && z.Recs > 0
	})
	if z.Span != float64(3*24*time.Hour/time.Millisecond) {
		t.Errorf("window spans %.0f ms, want three days", z.Span)
	}
}
