package player

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/testenv/headless"
)

// seekJS seeks the player to ms (window.vigiaPlayer.seekWall) and resolves
// to the milliseconds until it plays there: the picture's wall clock
// within a second before ms or after it, not paused, enough data, and the
// playing position advancing.
const seekJS = `new Promise((resolve) => {
  const ms = %d, v = document.getElementById('video');
  const t0 = performance.now();
  window.vigiaPlayer.seekWall(ms);
  let first = -1;
  const tick = () => {
    const wall = window.vigiaPlayer.wall();
    if (wall !== null && wall >= ms - 1000 && wall < ms + 10000 && !v.paused && v.readyState >= 3) {
      if (first < 0) { first = v.currentTime; }
      else if (v.currentTime > first + 0.05) { resolve(performance.now() - t0); return; }
    }
    if (performance.now() - t0 > 20000) { resolve(-1); return; }
    setTimeout(tick, 5);
  };
  tick();
})`

// BenchmarkTimelineSeek measures, in headless Chromium on loopback, how
// long a seek takes to play: three days of 60 s segments, the timeline
// zoomed out to them; "near" seeks stay within the playlist loaded (the
// playing time ± 30 min), "far" ones anywhere in the three days load a new
// one. Reported: p50, p99 and max of each, in ms.
func BenchmarkTimelineSeek(b *testing.B) {
	if !HasBundle() {
		b.Fatal("hls.js is not bundled: run make deps-npm")
	}
	ts := newTestServer(b)
	mountPlayer(ts, "")
	const cam = "seek"
	one := record(b, ts.store, "src", time.Now().Add(-2*time.Hour).Truncate(time.Second), 60*time.Second, 60*time.Second)[0]
	rc, err := ts.store.Get(context.Background(), one.Key, 0, -1)
	if err != nil {
		b.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	end := time.Now().Add(-time.Hour).Truncate(time.Minute)
	start := end.Add(-72 * time.Hour)
	// The same segment under every key of three days, 16 writers at once.
	keys := make(chan time.Time)
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for at := range keys {
				if err := ts.store.Put(context.Background(), storage.SegmentKey(cam, at, one.Duration(), one.InitSize), bytes.NewReader(data), int64(len(data)),
					storage.PutOptions{Metadata: map[string]string{"init-size": strconv.FormatInt(one.InitSize, 10)}}); err != nil {
					failed.Store(err)
				}
			}
		}()
	}
	for at := start; at.Before(end); at = at.Add(one.Duration()) {
		keys <- at
	}
	close(keys)
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	br := &browserPage{Browser: headless.Chromium(b), t: nil}
	mid := start.Add(36 * time.Hour)
	q := url.Values{"ts": {strconv.FormatInt(mid.Unix(), 10)}, "timeline_interval": {"24"}}
	if err := chromedp.Run(br.Ctx, chromedp.Navigate(ts.URL+"/api/camera/"+cam+"/player?"+q.Encode()),
		chromedp.Evaluate(`window.vigiaPlayer.zoom(1)`, nil)); err != nil {
		b.Fatal(err)
	}
	seek := func(ms int64) float64 {
		var d float64
		if err := chromedp.Run(br.Ctx, chromedp.Evaluate(fmt.Sprintf(seekJS, ms), &d, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		})); err != nil {
			b.Fatal(err)
		}
		if d < 0 {
			b.Fatalf("seek to %v did not play within 20 s", time.UnixMilli(ms))
		}
		return d
	}
	seek(mid.UnixMilli()) // warm up: the first playlist and hls.js
	var near, far []float64
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			var cur float64
			if err := chromedp.Run(br.Ctx, chromedp.Evaluate(`window.vigiaPlayer.wall()`, &cur)); err != nil {
				b.Fatal(err)
			}
			near = append(near, seek(int64(cur)+int64(rng.IntN(3600_000))-1800_000))
		} else {
			far = append(far, seek(start.UnixMilli()+rng.Int64N(72*3600_000-60_000)))
		}
	}
	b.StopTimer()
	for name, ds := range map[string][]float64{"near": near, "far": far} {
		if len(ds) == 0 {
			continue
		}
		slices.Sort(ds)
		b.ReportMetric(ds[len(ds)/2], name+"-p50-ms")
		b.ReportMetric(ds[min(len(ds)-1, len(ds)*99/100)], name+"-p99-ms")
		b.ReportMetric(ds[len(ds)-1], name+"-max-ms")
	}
}
