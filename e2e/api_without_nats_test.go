package e2e

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestAPIWithoutNATS stops the NATS server of a node wired like `vigia
// serve` (recorder, cluster, API) once its camera is recorded: the
// listing, the single read, the recordings operation, the recorded
// playlist, the thumbnails and a stored thumbnail each answer 200 within
// 2 s, the camera's status is its last one read (ONLINE), and creating a
// camera answers 503 within 2 s and saves nothing. A node serving only the
// API on the same NATS stays ready (/readyz 200, naming NATS).
func TestAPIWithoutNATS(t *testing.T) {
	t.Parallel()
	log, _ := testLogger(t)
	cam := startSynth(t, synth.CameraSpec{Path: "cam", Codec: "h264"})
	ns := startNATSServer(t)

	c := config.Default()
	c.DataDir = t.TempDir()
	c.NodeID = "api-no-nats"
	c.HTTP.Addr = "127.0.0.1:0"
	c.NATS.URL = "nats://" + ns.addr
	c.NATS.Listen = ""
	c.RTMP.Addr = "127.0.0.1:0"
	c.OperatorToken = apiOperator
	c.Security.Secret = "api-without-nats-secret-0123456789"
	c.Ingest.AllowPrivateNetworks = true
	c.Recording.SegmentDuration = config.Duration(2 * time.Second)
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	c.HTTP.PublicURL = ""
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a := startMode(t, c, app.Mode{Name: "test", Recorder: true, Cluster: true, API: true}, log)
	api := apiClient{t: t, base: a.URL()}
	op := "?token=" + apiOperator

	v := api.call("POST", "/api/v1/clients"+op, map[string]any{"name": "Acme", "document_type": 2, "document_number": "11.222.333/0001-81",
		"phone": "11 5555-0000", "cep": "01000-000", "address": "Rua A", "address_number": "10", "address_comp": "",
		"address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "Ana", "email": "ana@acme.com", "phone": "11", "user_type": 2, "password": "password1", "password_conf": "password1"}}}, 201)
	client := one(t, "create client", v).(map[string]any)
	u := cam.URL("cam")
	newCamera := map[string]any{"description": "Portão", "camera_address": "Rua A, 10", "latitude": "-23.55",
		"longitude": "-46.63", "connection_type": 0, "resolution_id": 1, "history_days": 7, "client_id": client["id"], "model_id": 3, "stream": "0", "typed_url": u}
	created := one(t, "create camera", api.call("POST", "/api/v1/cameras"+op, newCamera, 201)).(map[string]any)
	id := strconv.Itoa(int(created["id"].(float64)))

	listed := func() map[string]any {
		for _, d := range api.call("GET", "/api/v4/cameras"+op, nil, 200).(map[string]any)["data"].([]any) {
			if m := d.(map[string]any); m["id"] == id {
				return m
			}
		}
		return nil
	}
	testenv.WaitFor(t, 60*time.Second, "camera ONLINE in the listing", func() bool {
		m := listed()
		return m != nil && m["stream_status_desc"] == "ONLINE"
	})
	digest := "&digest=" + listed()["digest"].(string)
	since := time.Now().Add(-time.Minute).UnixMilli()
	waitSegments(t, a.Store(), id, 2, 60*time.Second)
	// A minute thumbnail, as the recorder's thumbnailer stores them.
	thumbKey := storage.MinuteThumbKey(id, time.Now())
	if err := a.Store().Put(t.Context(), thumbKey, strings.NewReader("jpeg"), 4, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	var thumbURL string
	testenv.WaitFor(t, 60*time.Second, "a minute thumbnail", func() bool {
		l := api.call("GET", "/api/camera/"+id+"/thumbs-minutes"+op+"&id="+id+digest+"&ts="+now, nil, 200).([]any)
		if len(l) == 0 {
			return false
		}
		thumbURL = l[len(l)-1].(map[string]any)["url"].(string)
		return true
	})

	// A node serving only the API on the same NATS (`vigia api`).
	ac := *c
	ac.DataDir, ac.NodeID = t.TempDir(), "api-only"
	ac.HTTP.Addr, ac.HTTP.PublicURL = "127.0.0.1:0", ""
	apiOnly := startMode(t, &ac, app.Mode{Name: "test", API: true}, log)

	ns.stop()
	// Let the node see the connection gone, as it would after any outage.
	testenv.WaitFor(t, 10*time.Second, "NATS seen down", func() bool { return !a.Bus().Conn().IsConnected() })

	timed := func(what string, f func()) {
		t.Helper()
		start := time.Now()
		f()
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s took %v without NATS, want under 2 s", what, d)
		}
	}
	get := func(u string) (int, string) {
		t.Helper()
		if strings.HasPrefix(u, "/") {
			u = a.URL() + u
		}
		res, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	for range 2 { // the first call finds NATS gone, the second knows it
		timed("camera listing", func() {
			m := listed()
			if m == nil || m["stream_status_desc"] != "ONLINE" {
				t.Errorf("listing without NATS: %v, want the camera with its last status ONLINE", m)
			}
		})
		timed("single read", func() {
			m := api.call("GET", "/api/camera-player/"+id+op, nil, 200).(map[string]any)
			if m["status"] != "ONLINE" {
				t.Errorf("single read without NATS: status %v, want ONLINE", m["status"])
			}
		})
		timed("recordings", func() {
			rv := api.call("GET", "/camera/"+id+"/recordings"+op+"&id="+id+digest+"&timeStamp="+strconv.FormatInt(since, 10), nil, 200).(map[string]any)
			if len(rv["DATA"].([]any)) < 2 {
				t.Errorf("recordings without NATS: %v", rv)
			}
		})
		timed("recorded playlist", func() {
			code, body := get("/api/camera/" + id + "/vod.m3u8" + op + "&from=" + strconv.FormatInt(since, 10) + "&to=" + strconv.FormatInt(time.Now().UnixMilli(), 10))
			if code != 200 || !strings.Contains(body, "#EXTINF") {
				t.Errorf("recorded playlist without NATS: %d %.200s", code, body)
			}
		})
		timed("thumbnails", func() {
			if l := api.call("GET", "/api/camera/"+id+"/thumbs-minutes"+op+"&id="+id+digest+"&ts="+now, nil, 200).([]any); len(l) == 0 {
				t.Error("thumbnails without NATS: none listed")
			}
		})
		timed("thumbnail", func() {
			if code, _ := get(thumbURL); code != 200 {
				t.Errorf("thumbnail without NATS: %d", code)
			}
		})
		timed("camera create", func() {
			v := api.call("POST", "/api/v1/cameras"+op, newCamera, 503).(map[string]any)
			if msg, _ := v["msg"].(string); !strings.Contains(msg, "NATS") {
				t.Errorf("camera create without NATS: %v, want a message naming NATS", v)
			}
		})
	}
	// The API-only node stays ready (it serves reads), naming NATS to
	// the operator.
	code, body := get(apiOnly.URL() + "/readyz" + op)
	if code != 200 || !strings.Contains(body, "nats: ") {
		t.Errorf("/readyz of an API-only node without NATS: %d %s, want 200 naming NATS", code, body)
	}
	if total := api.call("GET", "/api/v4/cameras"+op, nil, 200).(map[string]any)["total"]; total != float64(1) {
		t.Errorf("cameras after the refused creations: %v, want 1", total)
	}
}
