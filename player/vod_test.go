package player

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestVODHandler(t *testing.T) {
	ts := newTestServer(t)
	mountPlayer(ts, "")
	const cam = "cam-3"
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	segs := record(t, ts.store, cam, start, 20*time.Second, 5*time.Second)
	if len(segs) < 3 {
		t.Fatalf("%d segments", len(segs))
	}
	for _, s := range segs {
		if s.InitSize <= 0 || s.InitSize >= s.Size {
			t.Fatalf("segment %s: init size %d of %d", s.Key, s.InitSize, s.Size)
		}
	}
	get := func(q string) (int, string, http.Header) {
		res, err := http.Get(ts.URL + "/api/camera/" + cam + "/vod.m3u8?" + q)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res.Header
	}
	from, to := segs[0].StartMs+500, segs[1].StartMs+segs[1].DurationMs
	code, body, h := get(fmt.Sprintf("from=%d&to=%d", from, to))
	if code != 200 || h.Get("Content-Type") != "application/vnd.apple.mpegurl" || h.Get("Cache-Control") != "no-store" {
		t.Fatalf("status %d, type %q: %s", code, h.Get("Content-Type"), body)
	}
	if n := strings.Count(body, "#EXTINF:"); n != 2 || !strings.Contains(body, "#EXT-X-START:TIME-OFFSET=0.500,") {
		t.Errorf("want two segments starting 0.5 s in:\n%s", body)
	}
	// Every address is signed and serves the byte ranges it announces.
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "http") {
			continue
		}
		req, _ := http.NewRequest("GET", line, nil)
		req.Header.Set("Range", fmt.Sprintf("bytes=0-%d", segs[0].InitSize-1))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusPartialContent || len(b) < 8 || string(b[4:8]) != "ftyp" {
			t.Errorf("%s: status %d, %d bytes", line, res.StatusCode, len(b))
		}
	}

	tests := []struct {
		name, q string
		want    int
	}{
		{"no from", "to=5", 400},
		{"bad to", "from=1&to=x", 400},
		{"reversed", fmt.Sprintf("from=%d&to=%d", to, from), 400},
		{"too long", fmt.Sprintf("from=%d&to=%d", from, from+26*3600*1000), 400},
		{"nothing recorded", fmt.Sprintf("from=%d&to=%d", from-3600_000, from-3000_000), 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if code, body, _ := get(tt.q); code != tt.want {
				t.Errorf("status %d, want %d: %s", code, tt.want, body)
			}
		})
	}
}

func TestVODHandlerFailures(t *testing.T) {
	boom := errors.New("storage down")
	tests := []struct {
		name string
		cfg  VODConfig
		want int
	}{
		{"listing fails", VODConfig{
			List: func(context.Context, string, int64, int64) ([]StoredSegment, error) { return nil, boom },
			Sign: func(context.Context, string, time.Duration) (string, error) { return "u", nil }}, 502},
		{"signing fails", VODConfig{
			List: func(context.Context, string, int64, int64) ([]StoredSegment, error) {
				return []StoredSegment{{Key: "k", StartMs: 1000, DurationMs: 1000, Size: 10, InitSize: 5}}, nil
			},
			Sign: func(context.Context, string, time.Duration) (string, error) { return "", boom }}, 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := newTestServer(t)
			ts.mux.Handle("GET /v/{id}", VODHandler(tt.cfg))
			res, err := http.Get(ts.URL + "/v/1?from=0&to=5000")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tt.want {
				t.Errorf("status %d, want %d", res.StatusCode, tt.want)
			}
		})
	}
}
