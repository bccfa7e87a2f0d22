package catalogue_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/player"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/testenv"
)

// history90 fills a bucket of a fresh MinIO with 90 days of one camera's
// 60 s segments (129,600 objects, ending a minute ago, keys carrying their
// init sizes as the recorder writes them) and a gap record a day, and with
// the last 3 days of a second camera's segments stored in the older key
// form ({startMs}_{durMs}.mp4, the init size in metadata only). One segment
// of each form and one record are stored through the S3 API; the rest are
// copies of their xl.meta in the bucket's folder, which MinIO serves as
// objects of their own (the same bytes and metadata under every key), so
// generating them costs seconds, not the minutes of 129,600 PUTs.
func history90(b *testing.B) (st storage.Store, cam, older string, start, end time.Time) {
	b.Helper()
	srv := testenv.MinIO(b)
	bucket := testenv.NewBucketName(b)
	st, err := s3.New(context.Background(), s3.Options{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Bucket: bucket}, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	cam, older = "cam-90d", "cam-older"
	end = time.Now().Add(-time.Minute).Truncate(time.Minute)
	start = end.Add(-90 * 24 * time.Hour)
	olderStart := end.Add(-3 * 24 * time.Hour)
	body := bytes.Repeat([]byte{7}, 400)
	const initSize = 120
	segTemplate := storage.SegmentKey(cam, start, time.Minute, initSize)
	olderTemplate := storage.SegmentKey(older, olderStart, time.Minute, 0)
	gapTemplate := storage.GapKey(cam, start.Add(30*time.Second), 0, string(status.CauseCameraOffline))
	ctx := context.Background()
	for _, k := range []string{segTemplate, olderTemplate} {
		if err := st.Put(ctx, k, bytes.NewReader(body), int64(len(body)), storage.PutOptions{
			ContentType: "video/mp4", Metadata: map[string]string{catalogue.MetaInitSize: strconv.Itoa(initSize)}}); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Put(ctx, gapTemplate, strings.NewReader("{}"), 2, storage.PutOptions{}); err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(srv.DataDir(), bucket)
	meta := map[string][]byte{}
	for _, k := range []string{segTemplate, olderTemplate, gapTemplate} {
		if meta[k], err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(k), "xl.meta")); err != nil {
			b.Fatal(err)
		}
	}
	link := func(template, key string) error {
		to := filepath.Join(dir, filepath.FromSlash(key))
		if err := os.MkdirAll(to, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, "xl.meta"), meta[template], 0o644)
	}
	keys := make(chan [2]string, 256)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 8 {
		wg.Add(1)
		go func() { // exits when keys is closed
			defer wg.Done()
			for k := range keys {
				if err := link(k[0], k[1]); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		}()
	}
	began := time.Now()
	n := 0
	for at := start.Add(time.Minute); at.Before(end); at = at.Add(time.Minute) {
		keys <- [2]string{segTemplate, storage.SegmentKey(cam, at, time.Minute, initSize)}
		n++
		if at.Sub(start)%(24*time.Hour) == 0 {
			// A gap record a day (a camera offline for half a minute,
			// though the segments are all there).
			keys <- [2]string{gapTemplate, storage.GapKey(cam, at.Add(30*time.Second), 0, string(status.CauseCameraOffline))}
		}
		if at.After(olderStart) {
			keys <- [2]string{olderTemplate, storage.SegmentKey(older, at, time.Minute, 0)}
		}
	}
	close(keys)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	b.Logf("%d segments, 90 gap records and 3 days of older keys generated in %v", n+1, time.Since(began).Round(time.Millisecond))
	// MinIO finds them.
	for _, c := range []string{cam, older} {
		segs, err := catalogue.New(catalogue.Config{Store: st}).Segments(ctx, c, end.Add(-time.Hour), end)
		if err != nil || len(segs) != 60 {
			b.Fatalf("the last hour of %s lists %d segments (%v), want 60", c, len(segs), err)
		}
	}
	return st, cam, older, start, end
}

// measure runs op b.N times and reports the p50, p99 and max of its
// durations in milliseconds.
func measure(b *testing.B, op func(rng *rand.Rand)) {
	rng := rand.New(rand.NewPCG(uint64(b.N), 9))
	ds := make([]float64, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		op(rng)
		ds = append(ds, float64(time.Since(t0).Microseconds())/1000)
	}
	b.StopTimer()
	slices.Sort(ds)
	b.ReportMetric(ds[len(ds)/2], "p50-ms")
	b.ReportMetric(ds[min(len(ds)-1, len(ds)*99/100)], "p99-ms")
	b.ReportMetric(ds[len(ds)-1], "max-ms")
}

// BenchmarkCatalogue90Days measures, on 90 days of 60 s segments of one
// camera in MinIO, the answers the API gives at history scale: the
// recordings of a day (listing and a presigned URL per segment, as the
// recordings operation does), a 24 h recorded playlist (player.VODHandler
// with the API's segment addresses), the segment at a time, and the
// timeline of a day, each at a random place in the 90 days. Cold: a new
// catalogue for each answer, as on a node that never saw the camera; warm:
// one catalogue for all (what a node that has run holds). The init sizes
// come from the keys; the *_older_keys playlists are those of a day of
// segments stored in the older key form: cold, every init size read with
// Stat; warm, every init size in the catalogue's cache.
func BenchmarkCatalogue90Days(b *testing.B) {
	st, cam, older, start, end := history90(b)
	ctx := context.Background()
	day := func(rng *rand.Rand) time.Time {
		return start.Add(time.Duration(rng.Int64N(int64(end.Sub(start) - 24*time.Hour))))
	}
	olderDay := func(rng *rand.Rand) time.Time {
		return end.Add(-3*24*time.Hour + time.Minute).Add(time.Duration(rng.Int64N(int64(2*24*time.Hour - time.Minute))))
	}
	cat := catalogue.New(catalogue.Config{Store: st})
	b.Run("list_day", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) {
			from := day(rng)
			if segs := mustSegments(b, cat, cam, from, from.Add(24*time.Hour)); len(segs) < 1440 {
				b.Fatalf("%d segments in a day", len(segs))
			}
		})
	})
	b.Run("list_hour_prefix", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) {
			p := storage.SegmentPrefix(cam, day(rng))
			for _, err := range storage.Walk(ctx, st, p) {
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("list_day_one_listing", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) {
			from := day(rng)
			opts := storage.ListOptions{StartAfter: strings.TrimSuffix(storage.SegmentPrefix(cam, from.Add(-time.Hour)), "/")}
			n := 0
			for n < 1500 {
				page, err := st.List(ctx, storage.CameraSegmentsPrefix(cam), opts)
				if err != nil {
					b.Fatal(err)
				}
				n += len(page.Objects)
				if page.Next == "" {
					break
				}
				opts.StartAfter = page.Next
			}
		})
	})
	b.Run("sign_1440", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) {
			k := storage.SegmentKey(cam, day(rng), time.Minute, 120)
			for range 1440 {
				if _, err := st.SignedURL(ctx, k, 5*time.Minute); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	recordings := func(b *testing.B, c *catalogue.Catalogue, from time.Time) {
		n := 0
		for h, err := range c.Range(ctx, cam, from, from.Add(24*time.Hour)) {
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range h.Segments {
				if _, err := st.SignedURL(ctx, s.Key, 5*time.Minute); err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
		if n < 1440 {
			b.Fatalf("%d segments in a day", n)
		}
	}
	b.Run("recordings_day_warm", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) { recordings(b, cat, day(rng)) })
	})
	b.Run("recordings_day_cold", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) { recordings(b, catalogue.New(catalogue.Config{Store: st}), day(rng)) })
	})
	sign := func(_ context.Context, key string, _ time.Duration) (string, error) {
		return "/api/camera/" + cam + "/segment/" + path.Base(key) + "?player_digest=x", nil
	}
	playlist := func(b *testing.B, c *catalogue.Catalogue, camera string, from time.Time) {
		req := httptest.NewRequest("GET", fmt.Sprintf("/v?from=%d&to=%d", from.UnixMilli(), from.Add(24*time.Hour).UnixMilli()), nil)
		rec := httptest.NewRecorder()
		player.VODHandler(player.VODConfig{Catalogue: c, Sign: sign, Camera: func(*http.Request) string { return camera }}).ServeHTTP(rec, req)
		if rec.Code != 200 || strings.Count(rec.Body.String(), "#EXTINF:") < 1440 {
			b.Fatalf("status %d, %d segments", rec.Code, strings.Count(rec.Body.String(), "#EXTINF:"))
		}
	}
	b.Run("playlist_24h_warm", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) { playlist(b, cat, cam, day(rng)) })
	})
	b.Run("playlist_24h_cold", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) { playlist(b, catalogue.New(catalogue.Config{Store: st}), cam, day(rng)) })
	})
	b.Run("playlist_24h_cold_older_keys", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) { playlist(b, catalogue.New(catalogue.Config{Store: st}), older, olderDay(rng)) })
	})
	b.Run("playlist_24h_warm_older_keys", func(b *testing.B) {
		warm := catalogue.New(catalogue.Config{Store: st})
		// What a node that has run holds: the init sizes of the older
		// keys, from the segment notices or read once.
		if err := warm.InitSizes(ctx, mustSegments(b, warm, older, end.Add(-3*24*time.Hour), end)); err != nil {
			b.Fatal(err)
		}
		measure(b, func(rng *rand.Rand) { playlist(b, warm, older, olderDay(rng)) })
	})
	segmentAt := func(b *testing.B, c *catalogue.Catalogue, rng *rand.Rand) {
		at := start.Add(time.Minute + time.Duration(rng.Int64N(int64(end.Sub(start)-2*time.Minute))))
		if _, err := c.SegmentAt(ctx, cam, at); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("segment_at_warm", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) { segmentAt(b, cat, rng) })
	})
	b.Run("segment_at_cold", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) { segmentAt(b, catalogue.New(catalogue.Config{Store: st}), rng) })
	})
	b.Run("timeline_24h", func(b *testing.B) {
		measure(b, func(rng *rand.Rand) {
			from := day(rng)
			tl, err := cat.Timeline(ctx, cam, from, from.Add(24*time.Hour), catalogue.TimelineOptions{})
			if err != nil || tl.RecordedMs < 24*3600_000-120_000 {
				b.Fatalf("timeline %d ms recorded, %v", tl.RecordedMs, err)
			}
		})
	})
}

func mustSegments(b *testing.B, c *catalogue.Catalogue, cam string, from, to time.Time) []catalogue.Segment {
	segs, err := c.Segments(context.Background(), cam, from, to)
	if err != nil {
		b.Fatal(err)
	}
	return segs
}
