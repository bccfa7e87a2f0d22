package player

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
)

// nodeCameras is a recorder of fixed cameras.
type nodeCameras map[string]status.Status

func (c nodeCameras) Cameras() []string {
	var ids []string
	for id := range c {
		ids = append(ids, id)
	}
	return ids
}

func (c nodeCameras) Status(id string) (status.Status, bool) {
	s, ok := c[id]
	return s, ok
}

// nodePageFixture is a NodePage over an fs store holding one segment of
// cam1, started 10 minutes ago, listed by a catalogue.
func nodePageFixture(t *testing.T) (*NodePage, *http.ServeMux) {
	t.Helper()
	st, err := fs.New(t.TempDir(), fs.Options{BaseURL: "http://node.test/media", Secret: []byte("0123456789abcdef0123")})
	if err != nil {
		t.Fatal(err)
	}
	key := storage.SegmentKey("cam1", time.Now().Add(-10*time.Minute), 4*time.Second, 0)
	if err := st.Put(context.Background(), key, strings.NewReader("segment"), 7, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	p := &NodePage{
		Allowed:         func(r *http.Request) bool { return r.URL.Query().Get("token") == "op" },
		Node:            "node-7",
		Store:           st,
		SignedURLExpiry: time.Hour,
		Segments:        catalogue.New(catalogue.Config{Store: st}).Segments,
		Cameras: nodeCameras{
			"cam1": {Code: status.Online, Text: "ONLINE", Width: 1920, Height: 1080},
			"cam2": {Text: "ERRO", LastError: "camera refused the password"},
		},
		Recorded: func(camera string) (status.Completeness, bool) {
			return status.Completeness{Hour: 0.992, Day: 0.5}, camera == "cam1"
		},
		LiveURL: func(camera string, exp time.Time) string { return "/live/" + camera + "/index.m3u8?exp=1" },
		Statuses: func(context.Context) ([]status.Status, error) {
			return []status.Status{{Recorded: &status.Completeness{Hour: 1, Day: 0.9}}, {Recorded: &status.Completeness{Hour: 0.5, Day: 0.5}}, {}}, nil
		},
	}
	mux := http.NewServeMux()
	p.Register(mux)
	return p, mux
}

func get(mux *http.ServeMux, path string) *httptest.ResponseRecorder {
	rr := httptest.NewRecorder()
	mux.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, path, nil))
	return rr
}

// TestNodePageAccess: the page and its lists answer 401 to a request
// Allowed refuses.
func TestNodePageAccess(t *testing.T) {
	_, mux := nodePageFixture(t)
	for _, tc := range []struct {
		path string
		want int
		body string
	}{
		{"/", http.StatusUnauthorized, "this page needs ?token=OPERATOR_TOKEN\n"},
		{"/recordings/cam1", http.StatusUnauthorized, "operator token required\n"},
		{"/?token=op", http.StatusOK, ""},
		{"/recordings/cam1?token=op", http.StatusOK, ""},
		{"/recordings/bad%20id?token=op", http.StatusBadRequest, "invalid camera id\n"},
	} {
		rr := get(mux, tc.path)
		if rr.Code != tc.want || tc.body != "" && rr.Body.String() != tc.body {
			t.Errorf("GET %s: %d %q, want %d %q", tc.path, rr.Code, rr.Body.String(), tc.want, tc.body)
		}
	}
}

// TestNodePageLists: the page shows each camera's status, size, error,
// live address and completeness, and the cluster's mean completeness.
func TestNodePageLists(t *testing.T) {
	_, mux := nodePageFixture(t)
	rr := get(mux, "/?token=op")
	if ct := rr.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" || rr.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v", rr.Header())
	}
	body := rr.Body.String()
	for _, want := range []string{
		"<title>Vigia · node-7</title>",
		`data-camera="cam1" data-live="/live/cam1/index.m3u8?exp=1"`,
		`<span class="st ONLINE">ONLINE</span> · 1920x1080`,
		"Recorded 99.2 % of the last hour, 50.0 % of the last day",
		`<span class="st ERRO">ERRO</span>`,
		"camera refused the password",
		"Recorded, all 2 cameras of the cluster: <b>75.0 %</b> of the last hour, <b>70.0 %</b> of the last day",
		`const token = "op";`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "hls.min.js") {
		t.Error("the page loads hls.js without the API serving it")
	}
}

// TestNodePageWithoutRecorder: a node that records nothing and has no
// cluster figure says so.
func TestNodePageWithoutRecorder(t *testing.T) {
	p, mux := nodePageFixture(t)
	p.Cameras, p.Statuses, p.HLS = nil, nil, true
	body := get(mux, "/?token=op").Body.String()
	if !strings.Contains(body, "No cameras on this node.") || strings.Contains(body, "cluster-recorded") {
		t.Errorf("page of a node without cameras:\n%s", body)
	}
	if !strings.Contains(body, `<script src="/api/player/hls.min.js"></script>`) {
		t.Error("the page does not load hls.js from the API")
	}
}

// TestNodePageRecordings: the list holds the camera's segments of the
// last hours with signed URLs; a failed listing answers 502.
func TestNodePageRecordings(t *testing.T) {
	p, mux := nodePageFixture(t)
	var recs []recording
	rr := get(mux, "/recordings/cam1?token=op")
	if err := json.Unmarshal(rr.Body.Bytes(), &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].DurMs != 4000 || !strings.HasPrefix(recs[0].URL, "http://node.test/media/") || !strings.Contains(recs[0].URL, "sig=") {
		t.Errorf("recordings %+v", recs)
	}
	if body := get(mux, "/recordings/cam2?token=op").Body.String(); body != "[]\n" {
		t.Errorf("recordings of a camera without segments: %q", body)
	}
	p.Segments = func(context.Context, string, time.Time, time.Time) ([]catalogue.Segment, error) {
		return nil, errors.New("storage down")
	}
	if rr := get(mux, "/recordings/cam1?token=op"); rr.Code != http.StatusBadGateway {
		t.Errorf("failed listing: %d", rr.Code)
	}
}

// TestNodePageLiveURLExpiry: the live URLs of the page are signed for
// LiveURLExpiry, not hours, and /live-url/{camera} hands out a fresh one
// to a request Allowed lets in, which the page renews its playback with.
func TestNodePageLiveURLExpiry(t *testing.T) {
	p, mux := nodePageFixture(t)
	p.LiveURLExpiry = 2 * time.Minute
	var exps []time.Time
	p.LiveURL = func(camera string, exp time.Time) string {
		exps = append(exps, exp)
		return "/live/" + camera + "/index.m3u8?exp=" + strconv.FormatInt(exp.Unix(), 10) + "&sig=s"
	}
	body := get(mux, "/?token=op").Body.String()
	if len(exps) == 0 {
		t.Fatal("no live URL on the page")
	}
	for _, exp := range exps {
		if d := time.Until(exp); d > 2*time.Minute || d < time.Minute {
			t.Errorf("live URL of the page valid for %v, want 2m", d)
		}
	}
	if !strings.Contains(body, "'/live-url/'") {
		t.Error("the page does not renew its live URLs")
	}
	if rr := get(mux, "/live-url/cam1"); rr.Code != http.StatusUnauthorized {
		t.Errorf("live URL without the token: %d", rr.Code)
	}
	if rr := get(mux, "/live-url/nope?token=op"); rr.Code != http.StatusNotFound {
		t.Errorf("live URL of a camera not here: %d", rr.Code)
	}
	exps = nil
	rr := get(mux, "/live-url/cam1?token=op")
	var got struct{ URL string }
	if err := json.Unmarshal(rr.Body.Bytes(), &got); err != nil || rr.Code != http.StatusOK || !strings.HasPrefix(got.URL, "/live/cam1/index.m3u8?exp=") {
		t.Fatalf("live URL: %d %q", rr.Code, rr.Body.String())
	}
	if len(exps) != 1 || time.Until(exps[0]) > 2*time.Minute {
		t.Errorf("renewed URL expiries %v", exps)
	}
}
