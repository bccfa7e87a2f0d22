package player

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

func renderPage(t *testing.T, p Params) (string, *http.Response) {
	t.Helper()
	rec := httptest.NewRecorder()
	Page(rec, httptest.NewRequest("GET", "/api/camera/7/player", nil), p)
	res := rec.Result()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	return rec.Body.String(), res
}

var configBlock = regexp.MustCompile(`(?s)<script type="application/json" id="vigia-config">(.*?)</script>`)

func TestPageEscapesEveryValue(t *testing.T) {
	evil := `</script><script>alert(1)</script>"'&`
	q, err := ParseQuery(url.Values{"ts": {"1700000000"}, "delay": {"5"}, "hideHeader": {"1"}, "controls": {"0"},
		"timeline_ranges": {`[{"ini":1,"end":2,"fill":"#0f0"}]`}})
	if err != nil {
		t.Fatal(err)
	}
	html, res := renderPage(t, Params{
		CameraID: "7", CameraName: evil, LiveURL: "https://n/live/7.m3u8?s=" + evil,
		VODURL: "/api/camera/7/vod.m3u8?player_digest=" + evil, AssetsURL: "/assets", Now: time.UnixMilli(1_700_000_100_000), Query: q,
	})
	if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	if strings.Contains(html, "<script>alert(1)") {
		t.Fatal("camera name or URL injected into the page")
	}
	if !strings.Contains(html, `<body class="no-controls hide-header"`) {
		t.Error("body classes for controls=0 and hideHeader missing")
	}
	if !strings.Contains(html, `src="/assets/hls.min.js?v=`) {
		t.Error("script address does not use AssetsURL")
	}
	m := configBlock.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no config block in\n%s", html)
	}
	var cfg pageConfig
	if err := json.Unmarshal([]byte(m[1]), &cfg); err != nil {
		t.Fatalf("config block is not JSON: %v\n%s", err, m[1])
	}
	if cfg.Name != evil || cfg.VODURL != "/api/camera/7/vod.m3u8?player_digest="+evil {
		t.Errorf("config does not round-trip: %+v", cfg)
	}
	if cfg.Live || cfg.StartMs != (1700000000-5)*1000 || cfg.Controls || !cfg.Footer || cfg.WindowMs != 86400000 ||
		cfg.NowMs != 1_700_000_100_000 || len(cfg.Ranges) != 1 || cfg.Ranges[0].Color != "#0f0" || len(cfg.Speeds) != 6 {
		t.Errorf("config %+v", cfg)
	}
}

func TestPageLiveWithoutURL(t *testing.T) {
	html, _ := renderPage(t, Params{CameraID: "7", Query: Query{Footer: true, Controls: true}})
	m := configBlock.FindStringSubmatch(html)
	var cfg pageConfig
	if m == nil || json.Unmarshal([]byte(m[1]), &cfg) != nil {
		t.Fatal("no config block")
	}
	if !cfg.Live || cfg.LiveURL != "" || cfg.Speed != 1 || cfg.WindowMs != 86400000 || cfg.Ranges == nil {
		t.Errorf("config %+v", cfg)
	}
	if !strings.Contains(html, "<title>Camera 7</title>") {
		t.Error("title without a camera name")
	}
}

func TestAssets(t *testing.T) {
	h := Assets()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/hls.min.js", nil))
	if !HasBundle() {
		t.Fatalf("hls.js is not bundled (run make deps-npm); status %d: %s", rec.Code, rec.Body)
	}
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "Hls") || rec.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("bundle: status %d, type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	etag := rec.Header().Get("ETag")
	req := httptest.NewRequest("GET", "/hls.min.js", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Errorf("conditional request: status %d", rec.Code)
	}
	for _, p := range []string{"/", "/README.md", "/../page.go", "/assets/hls.min.js"} {
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		if rec.Code != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", p, rec.Code)
		}
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/hls.min.js", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d", rec.Code)
	}
}
