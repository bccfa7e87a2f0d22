package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
)

// testJPEG returns a small JPEG whose first pixel has gray level g.
func testJPEG(t testing.TB, g uint8) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 16, 16))
	for i := range img.Pix {
		img.Pix[i] = g
	}
	img.SetGray(0, 0, color.Gray{Y: g})
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hikvisionBody returns a multipart/form-data body as Hikvision cameras
// push an ANPR read: anpr.xml, then the plate crop and the whole scene.
func hikvisionBody(t testing.TB, xmlDoc, plate, scene []byte) (body []byte, contentType string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	part := func(name, ct string, data []byte) {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+name+`"; filename="`+name+`"`)
		h.Set("Content-Type", ct)
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(data)
	}
	part("anpr.xml", "text/xml", xmlDoc)
	part("licensePlatePicture.jpg", "image/jpeg", plate)
	part("detectionPicture.jpg", "image/jpeg", scene)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), mw.FormDataContentType()
}

// post sends body with the content type to the path of the env's server.
func (e *env) post(path, contentType string, body []byte) resp {
	e.t.Helper()
	res, err := http.Post(e.http.URL+path, contentType, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, body: data, header: res.Header}
}

// lprPath returns the path of the camera's lpr_url from its record.
func lprPath(t *testing.T, e *env, url string) string {
	t.Helper()
	if !strings.HasPrefix(url, e.http.URL+"/api/v1/lpr/") {
		t.Fatalf("lpr_url %q", url)
	}
	return strings.TrimPrefix(url, e.http.URL)
}

func TestLPRPush(t *testing.T) {
	var mu sync.Mutex
	var published []EventIn
	e := newEnv(t, "sqlite", func(c *Config) {
		c.LPR = LPRConfig{BodyLimit: 256 << 10}
		c.PublishEvent = func(_ context.Context, ev EventIn) error {
			mu.Lock()
			defer mu.Unlock()
			published = append(published, ev)
			return nil
		}
	})
	clientID, _, tok := e.clientWithUser("lpr@example.com")
	r := e.do("POST", op("/api/v1/cameras"), rtspCamera(clientID, "203.0.113.7")).want(t, 201)
	var created []struct {
		ID     int64  `json:"id"`
		LPRURL string `json:"lpr_url"`
	}
	if err := json.Unmarshal(r.body, &created); err != nil || len(created) != 1 {
		t.Fatalf("camera: %s", r.body)
	}
	path := lprPath(t, e, created[0].LPRURL)
	other := e.camera(clientID)

	xmlDoc, err := os.ReadFile("lpr/testdata/hikvision_anpr.xml")
	if err != nil {
		t.Fatal(err)
	}
	scene := testJPEG(t, 200)
	body, ct := hikvisionBody(t, xmlDoc, testJPEG(t, 40), scene)

	// Refused: another camera's key, a made-up key, an unknown camera.
	otherPath := strings.Replace(path, "/lpr/"+camID(created[0].ID)+"/", "/lpr/"+camID(other)+"/", 1)
	e.post(otherPath, ct, body).want(t, http.StatusForbidden)
	e.post("/api/v1/lpr/"+camID(created[0].ID)+"/00000000000000000000000000000000", ct, body).want(t, http.StatusForbidden)
	e.post("/api/v1/lpr/999/"+e.srv.lprKey("999"), ct, body).want(t, http.StatusNotFound)
	// Refused: larger than the limit, read or announced.
	big, bigCT := hikvisionBody(t, xmlDoc, testJPEG(t, 40), append(scene, make([]byte, 300<<10)...))
	e.post(path, bigCT, big).want(t, http.StatusRequestEntityTooLarge)
	req, _ := http.NewRequest("POST", e.http.URL+path, io.MultiReader(bytes.NewReader(big), bytes.NewReader(big)))
	req.Header.Set("Content-Type", bigCT)
	req.ContentLength = -1 // chunked: only reading finds it too large
	if res, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else if res.Body.Close(); res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked oversized body: %d", res.StatusCode)
	}
	// Not a plate read: acknowledged, nothing stored.
	hb, _ := os.ReadFile("lpr/testdata/heartbeat.xml")
	e.post(path, "application/xml; charset=UTF-8", hb).want(t, 200)
	// Invalid plate read.
	e.post(path, "application/json", []byte(`{"plate":"ABC1D23","confidence":140}`)).want(t, 422)

	// The Hikvision push, twice (a camera's retry): one event.
	r = e.post(path, ct, body).want(t, 200)
	var acc lprAccepted
	if err := json.Unmarshal(r.body, &acc); err != nil || acc.ID == "" {
		t.Fatalf("accepted: %s", r.body)
	}
	e.post(path, ct, body).want(t, 200)
	// The generic JSON form, with its picture.
	jsonBody, _ := json.Marshal(map[string]any{"plate": "XYZ9A87", "confidence": 88.5, "at": "2025-03-10T15:20:00Z",
		"picture": base64.StdEncoding.EncodeToString(testJPEG(t, 90))})
	e.post(path, "application/json", jsonBody).want(t, 200)

	r = e.do("GET", "/api/v1/events?token="+tok+"&start_at=2025-03-10&end_at=2025-03-10&event_types=7", nil).want(t, 200)
	var pages []struct {
		Total int `json:"total"`
		Data  []struct {
			EventAt         string   `json:"event_at"`
			EventType       int      `json:"event_type"`
			EventURL        string   `json:"event_url"`
			CameraID        int64    `json:"camera_id"`
			Plate           string   `json:"plate"`
			PlateConfidence *float64 `json:"plate_confidence"`
		} `json:"data"`
	}
	if err := json.Unmarshal(r.body, &pages); err != nil || len(pages) != 1 || pages[0].Total != 2 {
		t.Fatalf("events: %s", r.body)
	}
	hik, js := pages[0].Data[0], pages[0].Data[1] // newest first
	if hik.Plate != "BRA2E19" || hik.PlateConfidence == nil || *hik.PlateConfidence != 97 || hik.EventType != 7 ||
		hik.CameraID != created[0].ID || hik.EventAt != "10/03/2025 15:29:41" {
		t.Fatalf("Hikvision read: %+v (%s)", hik, r.body)
	}
	if got := fetch(t, hik.EventURL); got != string(scene) {
		t.Fatal("the event image is not the detection picture")
	}
	if js.Plate != "XYZ9A87" || *js.PlateConfidence != 88.5 || js.EventURL == "" {
		t.Fatalf("JSON read: %+v", js)
	}
	if _, err := e.store.Stat(context.Background(), storage.EventImageKey(camID(created[0].ID), acc.ID)); err != nil {
		t.Fatalf("picture not at events/{camera}/{id}.jpg: %v", err)
	}
	// Motion and other events carry no plate.
	if err := e.srv.StoreEvent(context.Background(), EventIn{ID: "m1", Camera: camID(created[0].ID), Type: 5, At: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	r = e.do("GET", "/api/v1/events?token="+tok+"&start_at=2025-03-10&end_at=2025-03-10&event_types=5", nil).want(t, 200)
	if strings.Contains(string(r.body), "plate") {
		t.Fatalf("motion event with a plate: %s", r.body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(published) != 3 || published[0].Plate != "BRA2E19" || published[0].Type != 7 || published[0].ImageKey == "" {
		t.Fatalf("published: %+v", published)
	}
}

func TestLPRRate(t *testing.T) {
	e := newEnv(t, "sqlite", func(c *Config) { c.LPR = LPRConfig{Rate: 1, Burst: 2} })
	clientID, _, _ := e.clientWithUser("lpr-rate@example.com")
	id := camID(e.camera(clientID))
	path := "/api/v1/lpr/" + id + "/" + e.srv.lprKey(id)
	for i, plate := range []string{"AAA1A11", "BBB2B22"} {
		e.post(path, "application/json", []byte(`{"plate":"`+plate+`"}`)).want(t, 200)
		_ = i
	}
	r := e.post(path, "application/json", []byte(`{"plate":"CCC3C33"}`)).want(t, http.StatusTooManyRequests)
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	e.clock.Set(e.clock.Now().Add(time.Second))
	e.post(path, "application/json", []byte(`{"plate":"CCC3C33"}`)).want(t, 200)
}

func TestLPRLimiter(t *testing.T) {
	l := newLPRLimiter(&LPRConfig{Rate: 2, Burst: 3})
	t0 := time.Unix(1000, 0)
	for i := 0; i < 3; i++ {
		if _, ok := l.allow("a", t0); !ok {
			t.Fatalf("read %d refused within the burst", i)
		}
	}
	wait, ok := l.allow("a", t0)
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("after the burst: %v %v", wait, ok)
	}
	if _, ok := l.allow("b", t0); !ok {
		t.Fatal("another camera's bucket is shared")
	}
	if _, ok := l.allow("a", t0.Add(500*time.Millisecond)); !ok {
		t.Fatal("a token did not come back")
	}
	l.allow("c", t0.Add(time.Hour)) // sweeps the idle buckets
	if len(l.buckets) != 1 {
		t.Fatalf("%d buckets kept", len(l.buckets))
	}
}
