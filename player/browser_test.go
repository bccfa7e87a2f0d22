package player

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// mountPlayer serves the page, the assets and the VOD playlists the way the
// API mounts them.
func mountPlayer(ts *testServer, liveURL string) {
	ts.mux.Handle("GET /api/player/", http.StripPrefix("/api/player", Assets()))
	cat := catalogue.New(catalogue.Config{Store: ts.store})
	ts.mux.Handle("GET /api/camera/{id}/vod.m3u8", VODHandler(VODConfig{Catalogue: cat, Sign: ts.store.SignedURL}))
	ts.mux.Handle("GET /api/camera/{id}/player/timeline", TimelineHandler(TimelineConfig{Catalogue: cat, Events: ts.events}))
	ts.mux.Handle("GET /api/camera/{id}/player/thumbs", ThumbsHandler(ThumbsConfig{Catalogue: cat,
		Sign: func(ctx context.Context, key string) string {
			u, _ := ts.store.SignedURL(ctx, key, time.Hour)
			return u
		}}))
	ts.mux.HandleFunc("GET /api/camera/{id}/player", func(w http.ResponseWriter, r *http.Request) {
		q, err := ParseQuery(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnprocessableEntity)
			return
		}
		id := r.PathValue("id")
		Page(w, r, Params{
			CameraID: id, CameraName: "Portaria <1>", LiveURL: liveURL,
			VODURL:      "/api/camera/" + id + "/vod.m3u8?player_digest=d1",
			TimelineURL: "/api/camera/" + id + "/player/timeline?player_digest=d1",
			ThumbsURL:   "/api/camera/" + id + "/player/thumbs?player_digest=d1",
			AssetsURL:   "/api/player/", Query: q,
		})
	})
}

// pageState is what the test reads from the page.
type pageState struct {
	State       string  `json:"state"`
	Playing     string  `json:"playing"`
	CurrentTime float64 `json:"currentTime"`
	WallMs      float64 `json:"wallMs"`
	Message     string  `json:"message"`
	From        float64 `json:"from"`
	To          float64 `json:"to"`
}

const readState = `(() => {
  const tl = document.getElementById('timeline');
  return {
    state: document.body.dataset.state || '',
    playing: document.body.dataset.playing || '',
    currentTime: document.getElementById('video').currentTime,
    wallMs: Number(document.getElementById('clock').dataset.ms || 0),
    message: document.getElementById('message').hidden ? '' : document.getElementById('message').textContent,
    from: Number(tl.dataset.from || 0), to: Number(tl.dataset.to || 0),
  };
})()`

func (b *browserPage) state() pageState {
	b.t.Helper()
	var s pageState
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(readState, &s)); err != nil {
		b.t.Fatalf("read page state: %v", err)
	}
	return s
}

type browserPage struct {
	*headless.Browser
	t *testing.T
}

// waitState polls the page until cond holds.
func (b *browserPage) waitState(timeout time.Duration, what string, cond func(pageState) bool) pageState {
	b.t.Helper()
	var s pageState
	testenv.WaitForNil(b.t, timeout, what, func() error {
		if s = b.state(); !cond(s) {
			return fmt.Errorf("page state %+v", s)
		}
		return nil
	})
	return s
}

// waitAdvance waits until currentTime has advanced by 3 s from now on,
// within the 15 s the acceptance criterion allows.
func (b *browserPage) waitAdvance(what string) (before, after pageState) {
	b.t.Helper()
	before = b.state()
	after = b.waitState(15*time.Second, what+": currentTime advancing by 3 s", func(s pageState) bool {
		return s.CurrentTime-before.CurrentTime >= 3
	})
	return before, after
}

// rangeStyle is one drawn highlight range.
type rangeStyle struct {
	Start string  `json:"start"`
	End   string  `json:"end"`
	Color string  `json:"color"`
	Width float64 `json:"width"`
}

const readRanges = `[...document.querySelectorAll('#tl-ranges .tl-range')].map(e => ({
  start: e.dataset.start, end: e.dataset.end,
  color: getComputedStyle(e).backgroundColor, width: e.getBoundingClientRect().width,
}))`

func TestPlayerRecordedPlaybackInChromium(t *testing.T) {
	if !HasBundle() {
		t.Fatal("hls.js is not bundled: run make deps-npm")
	}
	ts := newTestServer(t)
	mountPlayer(ts, "")
	const cam = "cam-7"
	start := time.Now().Add(-4 * time.Minute).Truncate(time.Second)
	segs := record(t, ts.store, cam, start, 3*time.Minute, 5*time.Second)
	if len(segs) < 20 {
		t.Fatalf("%d segments recorded, want at least 20", len(segs))
	}
	t.Logf("recorded %d segments from %s, last ends %s", len(segs), start.Format(time.TimeOnly),
		time.UnixMilli(segs[len(segs)-1].StartMs+segs[len(segs)-1].DurMs).Format(time.TimeOnly))

	tsSec := start.Add(90 * time.Second).Unix()
	playFrom := (tsSec - 10) * 1000
	ms := func(d time.Duration) int64 { return start.Add(d).UnixMilli() }
	ranges := fmt.Sprintf(`[{"start_ts":%d,"end_ts":%d,"fill":"#ff0000","color":"#00ff00"},`+
		`{"ini":"%d","end":"%d","color":"rgba(0, 0, 255, 0.5)"},{"start_ts":%d,"end_ts":%d}]`,
		ms(10*time.Second), ms(30*time.Second), ms(40*time.Second), ms(60*time.Second), ms(70*time.Second), ms(80*time.Second))
	q := url.Values{
		"ts": {strconv.FormatInt(tsSec, 10)}, "delay": {"10"}, "timeline_interval": {"10"},
		"timeline_ranges": {ranges}, "timeline_ranges_fill": {"#0C0"},
		"start_ts": {strconv.FormatInt(ms(100*time.Second), 10)}, "end_ts": {strconv.FormatInt(ms(110*time.Second), 10)},
		"start_timestamps[]": {strconv.FormatInt(ms(120*time.Second), 10), strconv.FormatInt(ms(140*time.Second), 10)},
		"end_timestamps[]":   {strconv.FormatInt(ms(130*time.Second), 10), strconv.FormatInt(ms(150*time.Second), 10)},
		"player_digest":      {"d1"},
	}
	b := &browserPage{Browser: headless.Chromium(t), t: t}
	pageURL := ts.URL + "/api/camera/" + cam + "/player?" + q.Encode()
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatal(err)
	}

	// Recorded playback starts at ts - delay and plays.
	s := b.waitState(30*time.Second, "recorded playback to start", func(s pageState) bool {
		return s.State == "recorded" && s.Playing == "1" && s.WallMs > 0
	})
	if s.WallMs < float64(playFrom-1000) || s.WallMs > float64(playFrom+15000) {
		t.Errorf("playback started at %s, want about %s (ts - delay)",
			time.UnixMilli(int64(s.WallMs)).Format(time.TimeOnly), time.UnixMilli(playFrom).Format(time.TimeOnly))
	}
	before, after := b.waitAdvance("recorded playback")
	t.Logf("currentTime %.2f -> %.2f, wall %s -> %s", before.CurrentTime, after.CurrentTime,
		time.UnixMilli(int64(before.WallMs)).Format(time.TimeOnly), time.UnixMilli(int64(after.WallMs)).Format(time.TimeOnly))
	if d := after.WallMs - before.WallMs; d < 2500 || d > 20000 {
		t.Errorf("wall clock moved %.0f ms while currentTime moved %.2f s", d, after.CurrentTime-before.CurrentTime)
	}

	// Highlight ranges, with the colour priority: per-item fill (over
	// color), per-item color, timeline_ranges_fill for the rest.
	var got []rangeStyle
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(readRanges, &got)); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		start int64
		color [4]float64
	}{
		{ms(10 * time.Second), [4]float64{255, 0, 0, 1}},
		{ms(40 * time.Second), [4]float64{0, 0, 255, 0.5}},
		{ms(70 * time.Second), [4]float64{0, 204, 0, 1}},
		{ms(100 * time.Second), [4]float64{0, 204, 0, 1}},
		{ms(120 * time.Second), [4]float64{0, 204, 0, 1}},
		{ms(140 * time.Second), [4]float64{0, 204, 0, 1}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d ranges drawn, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Start != strconv.FormatInt(w.start, 10) {
			t.Errorf("range %d starts at %s, want %d", i, got[i].Start, w.start)
		}
		if c, ok := parseCSSColor(got[i].Color); !ok || !sameColor(c, w.color) {
			t.Errorf("range %d has colour %q, want %v", i, got[i].Color, w.color)
		}
		if got[i].Width < 1 {
			t.Errorf("range %d is %.1f px wide", i, got[i].Width)
		}
	}

	// A click on the timeline seeks there: 1 s before a segment boundary,
	// so playing on crosses into the next segment.
	target := segs[len(segs)-6].StartMs + segs[len(segs)-6].DurMs - 1000
	clickTimeline(t, b, s, target)
	b.waitState(20*time.Second, "the click to seek", func(s pageState) bool {
		return s.WallMs >= float64(target-1500) && s.WallMs <= float64(target+8000)
	})
	before, after = b.waitAdvance("playback after the seek")
	if after.WallMs <= float64(segs[len(segs)-5].StartMs) {
		t.Errorf("playback did not cross the segment boundary at %d: wall %.0f", segs[len(segs)-5].StartMs, after.WallMs)
	}

	// Without timeline_ranges_fill, ranges without their own colour take
	// the default colour.
	q2 := url.Values{
		"ts": {strconv.FormatInt(tsSec, 10)}, "timeline_interval": {"10"}, "footer": {"1"}, "controls": {"0"},
		"start_ts": {strconv.FormatInt(ms(100*time.Second), 10)}, "end_ts": {strconv.FormatInt(ms(110*time.Second), 10)},
		"timeline_ranges": {fmt.Sprintf(`[{"ini":%d,"end":%d,"fill":"#11223344"}]`, ms(20*time.Second), ms(25*time.Second))},
	}
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(ts.URL+"/api/camera/"+cam+"/player?"+q2.Encode())); err != nil {
		t.Fatal(err)
	}
	b.waitState(30*time.Second, "the second page to play", func(s pageState) bool { return s.State == "recorded" && s.Playing == "1" })
	got = nil
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(readRanges, &got)); err != nil {
		t.Fatal(err)
	}
	want2 := [][4]float64{{17, 34, 51, 0x44 / 255.0}, {255, 179, 0, 1}}
	if len(got) != len(want2) {
		t.Fatalf("%d ranges drawn, want %d: %+v", len(got), len(want2), got)
	}
	for i, w := range want2 {
		if c, ok := parseCSSColor(got[i].Color); !ok || !sameColor(c, w) {
			t.Errorf("range %d has colour %q, want %v", i, got[i].Color, w)
		}
	}
	var controlsShown bool
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`getComputedStyle(document.getElementById('controls')).display !== 'none'`, &controlsShown)); err != nil {
		t.Fatal(err)
	}
	if controlsShown {
		t.Error("controls=0 still shows the controls")
	}

	// Live mode without a live playlist says so, and the timeline still
	// shows the recordings of the last 10 minutes.
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(ts.URL+"/api/camera/"+cam+"/player?timeline_interval=10&ts=0")); err != nil {
		t.Fatal(err)
	}
	s = b.waitState(30*time.Second, "live mode without a live playlist", func(s pageState) bool { return s.State == "live-unavailable" })
	if !strings.Contains(s.Message, "Live video is not available") {
		t.Errorf("message %q", s.Message)
	}
	var spans int
	waitFor := time.Now().Add(15 * time.Second)
	for spans == 0 && time.Now().Before(waitFor) {
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`document.querySelectorAll('#tl-recorded .tl-rec').length`, &spans)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if spans != 1 {
		t.Errorf("%d recorded spans on the live timeline, want 1 (the segments touch)", spans)
	}
}

// clickTimeline clicks the timeline at wall-clock time ms.
func clickTimeline(t *testing.T, b *browserPage, s pageState, ms int64) {
	t.Helper()
	var rect struct{ X, Y, W, H float64 }
	if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`(() => { const r = document.getElementById('timeline').getBoundingClientRect();
		return {X: r.left, Y: r.top, W: r.width, H: r.height}; })()`, &rect)); err != nil {
		t.Fatal(err)
	}
	if s.To <= s.From || float64(ms) < s.From || float64(ms) > s.To {
		t.Fatalf("time %d is outside the timeline %.0f..%.0f", ms, s.From, s.To)
	}
	x := rect.X + (float64(ms)-s.From)/(s.To-s.From)*rect.W
	if err := chromedp.Run(b.Ctx, chromedp.MouseClickXY(x, rect.Y+rect.H/2)); err != nil {
		t.Fatal(err)
	}
}

// parseCSSColor reads rgb(r, g, b) or rgba(r, g, b, a) as getComputedStyle
// writes it.
func parseCSSColor(s string) ([4]float64, bool) {
	var c [4]float64
	s = strings.TrimSpace(s)
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return c, false
	}
	parts := strings.Split(s[i+1:j], ",")
	if len(parts) != 3 && len(parts) != 4 {
		return c, false
	}
	c[3] = 1
	for k, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return c, false
		}
		c[k] = v
	}
	return c, true
}

func sameColor(a, b [4]float64) bool {
	for k := 0; k < 3; k++ {
		if a[k] != b[k] {
			return false
		}
	}
	d := a[3] - b[3]
	return d < 0.01 && d > -0.01
}

// ffprobeResult is the part of ffprobe's JSON the test reads.
type ffprobeResult struct {
	Streams []struct {
		CodecName string `json:"codec_name"`
		Width     int    `json:"width"`
	} `json:"streams"`
	Format struct {
		Duration string `json:"duration"`
	} `json:"format"`
}

func TestVODPlaylistReadByFFprobe(t *testing.T) {
	ts := newTestServer(t)
	mountPlayer(ts, "")
	const cam = "cam-9"
	start := time.Now().Add(-2 * time.Minute).Truncate(time.Second)
	segs := record(t, ts.store, cam, start, 40*time.Second, 5*time.Second)
	if len(segs) < 5 {
		t.Fatalf("%d segments recorded, want at least 5", len(segs))
	}
	from, to := segs[1].StartMs, segs[4].StartMs+segs[4].DurMs
	vod := fmt.Sprintf("%s/api/camera/%s/vod.m3u8?from=%d&to=%d", ts.URL, cam, from, to)
	out, err := exec.Command("ffprobe", "-v", "error",
		"-show_entries", "stream=codec_name,width:format=duration", "-of", "json", vod).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe %s: %v\n%s", vod, err, out)
	}
	var res ffprobeResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ffprobe output: %v\n%s", err, out)
	}
	codecs := map[string]bool{}
	for _, s := range res.Streams {
		codecs[s.CodecName] = true
		if s.CodecName == "h264" && s.Width != 640 {
			t.Errorf("video width %d, want 640", s.Width)
		}
	}
	if !codecs["h264"] || !codecs["aac"] {
		t.Errorf("ffprobe streams %v, want h264 and aac", codecs)
	}
	dur, err := strconv.ParseFloat(res.Format.Duration, 64)
	want := float64(to-from) / 1000
	if err != nil || dur < want-0.5 || dur > want+0.5 {
		t.Errorf("ffprobe duration %q, want %.3f (four segments)", res.Format.Duration, want)
	}
}
