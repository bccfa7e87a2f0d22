//go:build cgo

package app

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/segmenter"
)

// TestQuotaEndToEnd: a node with the database and retention.camera_quota.
// An API camera's segments, stored through the upload path, exceed the
// quota; one sweep deletes the oldest of them and no newer one, well within
// the camera's history_days; the player's timeline shows their time as a
// retention_quota gap; verification counts them expired by quota, not
// removed; /metrics has the camera's bytes, within the quota, and the
// quota.
func TestQuotaEndToEnd(t *testing.T) {
	const segBytes, quota = 10000, 35000
	a := apiApp(t, Mode{Name: "api", API: true}, func(c *config.Config) {
		c.Retention.CameraQuota = config.Size(quota)
	})
	ctx := t.Context()
	client := createClient(t, a)
	cam, _ := created(call(t, a, "POST", "/api/v1/cameras?token="+testOperator, pushCamera(client, 30), 201))
	start := time.Now().Add(-2 * time.Hour).UTC().Truncate(time.Hour)
	var keys []string
	for i := range 6 {
		p := filepath.Join(t.TempDir(), "seg.mp4")
		if err := os.WriteFile(p, make([]byte, segBytes), 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		seg := segmenter.Segment{Camera: cam, Start: start.Add(time.Duration(i) * 10 * time.Minute), Duration: 10 * time.Minute,
			InitSize: 10, Size: segBytes, Path: p}
		err = a.uploadSegment(ctx, seg, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, segmentKey(seg))
	}

	if _, swept, err := a.SweepRetention(ctx); err != nil || swept != 2 {
		t.Fatalf("sweep: %d sweepers, %v", swept, err)
	}
	// 60 000 bytes and a manifest to at most 35 000: the three oldest
	// segments go, the three newest stay.
	for i, k := range keys {
		if got, want := stored(t, a, k), i >= 3; got != want {
			t.Errorf("segment %d (%s) kept %v, want %v", i, k, got, want)
		}
	}

	tl := call(t, a, "GET", fmt.Sprintf("/api/camera/%s/player/timeline?token=%s&from=%d&to=%d", cam, testOperator,
		start.UnixMilli(), start.Add(time.Hour).UnixMilli()), nil, 200).(map[string]any)
	gaps, _ := tl["gaps"].([]any)
	if len(gaps) == 0 {
		t.Fatalf("timeline without gaps: %v", tl)
	}
	g := gaps[0].(map[string]any)
	if g["cause"] != "retention_quota" || int64(g["start_ms"].(float64)) != start.UnixMilli() || int64(g["end_ms"].(float64)) != start.Add(30*time.Minute).UnixMilli() {
		t.Errorf("timeline gap %v, want retention_quota over the first 30 minutes", g)
	}

	rep, err := integrity.Verify(ctx, a.Store(), cam, start, start.Add(time.Hour))
	if err != nil || !rep.OK() || rep.Expired != 3 || rep.Segments != 6 {
		t.Errorf("verification after the quota: %+v %v; want 3 expired, no problem", rep, err)
	}

	res, err := http.Get(a.URL() + "/metrics?token=" + testOperator)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	series := func(name string) (float64, bool) {
		m := regexp.MustCompile(`(?m)^` + name + `\{camera="` + cam + `",client="[0-9]*"\} (\S+)$`).FindSubmatch(body)
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(string(m[1]), 64)
		return v, err == nil
	}
	if v, ok := series("vigia_storage_bytes"); !ok || v <= 0 || v > quota {
		t.Errorf("vigia_storage_bytes of camera %s: %v (%v), want within the quota", cam, v, ok)
	}
	if v, ok := series("vigia_storage_quota_bytes"); !ok || v != quota {
		t.Errorf("vigia_storage_quota_bytes of camera %s: %v (%v), want %d", cam, v, ok, quota)
	}
}
