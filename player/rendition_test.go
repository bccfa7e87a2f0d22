package player

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
)

// fakeSegment is a stand-in for a stored segment: a top-level box, then a
// moof box, then payload.
func fakeSegment(payload string) []byte {
	box := func(typ, body string) []byte {
		b := []byte{0, 0, 0, byte(8 + len(body))}
		return append(append(b, typ...), body...)
	}
	return append(append(box("moov", "init"), box("moof", "frag")...), payload...)
}

func TestRenditionHandler(t *testing.T) {
	keyA := storage.SegmentKey("cam", time.UnixMilli(1_700_000_000_000), 2*time.Second, 100)
	keyB := storage.SegmentKey("cam", time.UnixMilli(1_700_000_002_000), 2*time.Second, 100)
	other := storage.SegmentKey("other", time.UnixMilli(1_700_000_000_000), 2*time.Second, 100)
	var transcodes, opens atomic.Int32
	h := RenditionHandler(RenditionConfig{
		Open: func(_ context.Context, key string) (io.ReadCloser, error) {
			opens.Add(1)
			if key == keyB {
				return nil, errors.New("storage down")
			}
			return io.NopCloser(strings.NewReader(key)), nil
		},
		Transcode: func(seg []byte) ([]byte, error) {
			transcodes.Add(1)
			return fakeSegment(strings.Repeat("x", 100)), nil
		},
		CacheBytes: 150,
	})
	mux := http.NewServeMux()
	mux.Handle("GET /api/camera/{id}/h264", h)
	get := func(camera, key, part string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/camera/"+camera+"/h264?key="+url.QueryEscape(key)+"&part="+part, nil))
		return rec
	}
	init, media := get("cam", keyA, "init"), get("cam", keyA, "media")
	if init.Code != 200 || media.Code != 200 {
		t.Fatalf("init %d, media %d; want 200", init.Code, media.Code)
	}
	whole := fakeSegment(strings.Repeat("x", 100))
	if !bytes.Equal(append(init.Body.Bytes(), media.Body.Bytes()...), whole) || init.Body.Len() != 12 {
		t.Fatalf("init %q + media %q; want the rendition split at its moof", init.Body, media.Body)
	}
	if n := transcodes.Load(); n != 1 {
		t.Fatalf("%d transcodes for the two parts of one segment; want 1 (cached)", n)
	}
	for _, tc := range []struct {
		name, camera, key, part string
		want                    int
	}{
		{"another camera's segment", "cam", other, "init", http.StatusNotFound},
		{"not a key", "cam", "cam/../x", "init", http.StatusNotFound},
		{"no part", "cam", keyA, "", http.StatusBadRequest},
		{"storage failing", "cam", keyB, "media", http.StatusBadGateway},
	} {
		if got := get(tc.camera, tc.key, tc.part).Code; got != tc.want {
			t.Errorf("%s: %d; want %d", tc.name, got, tc.want)
		}
	}
	// A failure is not cached: the next request tries again.
	before := opens.Load()
	get("cam", keyB, "media")
	if opens.Load() != before+1 {
		t.Error("a failed rendition was cached")
	}
	// The cache holds one rendition of 112 bytes in 150: a second one
	// evicts the first, which is then transcoded again.
	keyC := storage.SegmentKey("cam", time.UnixMilli(1_700_000_004_000), 2*time.Second, 100)
	get("cam", keyC, "init")
	get("cam", keyA, "init")
	if n := transcodes.Load(); n != 3 {
		t.Fatalf("%d transcodes; want 3 (the first evicted by the second)", n)
	}
}
