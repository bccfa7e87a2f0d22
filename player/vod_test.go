package player

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/storage"
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
	from, to := segs[0].StartMs+500, segs[1].StartMs+segs[1].DurMs
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
		{"too long", fmt.Sprintf("from=%d&to=%d", from, from+32*24*3600*1000), 400},
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

// failingStore fails every listing, or every Stat.
type failingStore struct {
	storage.Store
	list, stat bool
}

func (f failingStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListPage, error) {
	if f.list {
		return storage.ListPage{}, errors.New("storage down")
	}
	return f.Store.List(ctx, prefix, opts)
}

func (f failingStore) Stat(ctx context.Context, key string) (storage.Object, error) {
	if f.stat {
		return storage.Object{}, errors.New("storage down")
	}
	return f.Store.Stat(ctx, key)
}

func TestVODHandlerFailures(t *testing.T) {
	ts := newTestServer(t)
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	segs := record(t, ts.store, "1", start, 12*time.Second, 5*time.Second)
	from, to := segs[0].StartMs, segs[len(segs)-1].EndMs()
	// The same segments as camera 2 in the older key form, their init
	// sizes in the metadata only.
	for _, s := range segs {
		body, err := ts.store.Get(context.Background(), s.Key, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(body)
		body.Close()
		if err := ts.store.Put(context.Background(), storage.SegmentKey("2", s.Start(), s.Duration(), 0), bytes.NewReader(data), int64(len(data)),
			storage.PutOptions{Metadata: map[string]string{"init-size": strconv.FormatInt(s.InitSize, 10)}}); err != nil {
			t.Fatal(err)
		}
	}
	sign := func(context.Context, string, time.Duration) (string, error) { return "u", nil }
	boom := func(context.Context, string, time.Duration) (string, error) { return "", errors.New("no key") }
	tests := []struct {
		name   string
		camera string
		store  storage.Store
		sign   SignFunc
		want   int
	}{
		{"listing fails", "1", failingStore{Store: ts.store, list: true}, sign, 502},
		{"init sizes fail, keys carry them", "1", failingStore{Store: ts.store, stat: true}, sign, 200},
		{"init sizes fail, older keys", "2", failingStore{Store: ts.store, stat: true}, sign, 502},
		{"signing fails", "1", ts.store, boom, 502},
		{"all well", "1", ts.store, sign, 200},
		{"all well, older keys", "2", ts.store, sign, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			mux.Handle("GET /v/{id}", VODHandler(VODConfig{Catalogue: catalogue.New(catalogue.Config{Store: tt.store}), Sign: tt.sign}))
			srv := httptest.NewServer(mux)
			defer srv.Close()
			res, err := http.Get(fmt.Sprintf("%s/v/%s?from=%d&to=%d", srv.URL, tt.camera, from, to))
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

// A playlist of several days is written as its hours are listed: days of
// segments whose keys carry their init sizes need no Stat at all; segments
// stored in the older key form have each init size read once, and a second
// request reads none.
func TestVODHandlerDays(t *testing.T) {
	ts := newTestServer(t)
	one := record(t, ts.store, "src", time.Now().Add(-time.Hour).Truncate(time.Second), 4*time.Second, 2*time.Second)[0]
	body, err := ts.store.Get(context.Background(), one.Key, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(body)
	body.Close()
	base := time.Now().Add(-72 * time.Hour).Truncate(time.Hour)
	for _, tc := range []struct {
		camera   string
		initSize int64 // in the key
		stats    int   // per segment, for both playlists
	}{
		{"keyed", one.InitSize, 0},
		{"older", 0, 1},
	} {
		t.Run(tc.camera, func(t *testing.T) {
			// Three days of a segment every five minutes, the same bytes
			// under each key.
			n := 0
			for at := base; at.Before(base.Add(72 * time.Hour)); at = at.Add(5 * time.Minute) {
				key := storage.SegmentKey(tc.camera, at, one.Duration(), tc.initSize)
				if err := ts.store.Put(context.Background(), key, bytes.NewReader(data), int64(len(data)),
					storage.PutOptions{Metadata: map[string]string{"init-size": strconv.FormatInt(one.InitSize, 10)}}); err != nil {
					t.Fatal(err)
				}
				n++
			}
			cs := &statCounter{Store: ts.store}
			h := VODHandler(VODConfig{Catalogue: catalogue.New(catalogue.Config{Store: cs}), Sign: ts.store.SignedURL})
			for round := 0; round < 2; round++ {
				req := httptest.NewRequest("GET", fmt.Sprintf("/v/%s?from=%d&to=%d", tc.camera, base.UnixMilli(), base.Add(72*time.Hour).UnixMilli()), nil)
				req.SetPathValue("id", tc.camera)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
				}
				if got := strings.Count(rec.Body.String(), "#EXTINF:"); got != n {
					t.Errorf("round %d: %d segments in the playlist, want %d", round, got, n)
				}
				if got := strings.Count(rec.Body.String(), fmt.Sprintf(`BYTERANGE="%d@0"`, one.InitSize)); got != n {
					t.Errorf("round %d: %d maps of %d bytes, want %d", round, got, one.InitSize, n)
				}
				if !strings.HasSuffix(rec.Body.String(), "#EXT-X-ENDLIST\n") {
					t.Errorf("round %d: the playlist has no end", round)
				}
			}
			if got, want := cs.stats.Load(), int64(tc.stats*n); got != want {
				t.Errorf("%d Stat calls for two playlists of %d segments, want %d", got, n, want)
			}
		})
	}
}

// statCounter counts Stat calls.
type statCounter struct {
	storage.Store
	stats atomic.Int64
}

func (s *statCounter) Stat(ctx context.Context, key string) (storage.Object, error) {
	s.stats.Add(1)
	return s.Store.Stat(ctx, key)
}
