package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

const apiOperator = "e2e-operator-token-0123456789abcdef"

// apiClient calls the interface of a running node.
type apiClient struct {
	t    *testing.T
	base string
}

// call sends a request (body JSON, url.Values form, or nil) and decodes a
// JSON answer into any; it fails unless the status is want.
func (c apiClient) call(method, path string, body any, want int) any {
	c.t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case url.Values:
		rd, ct = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	case nil:
	default:
		data, _ := json.Marshal(b)
		rd, ct = bytes.NewReader(data), "application/json"
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, res.StatusCode, want, data)
	}
	var v any
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(data, &v); err != nil {
			c.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
		return v
	}
	return string(data)
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	case nil:
		return "null"
	}
	return "?"
}

// shape checks that obj has each field with the JSON type given.
func shape(t *testing.T, what string, v any, fields map[string]string) map[string]any {
	t.Helper()
	obj, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: not an object: %v", what, v)
	}
	for f, typ := range fields {
		got, has := obj[f]
		if !has {
			t.Errorf("%s: field %s missing", what, f)
			continue
		}
		if jt := jsonType(got); jt != typ {
			t.Errorf("%s: field %s is %s, want %s", what, f, jt, typ)
		}
	}
	return obj
}

func one(t *testing.T, what string, v any) any {
	t.Helper()
	l, ok := v.([]any)
	if !ok || len(l) != 1 {
		t.Fatalf("%s: want a list of one, got %v", what, v)
	}
	return l[0]
}

// TestAPISpecCalls replays every operation of the service interface against
// a node wired like `vigia serve` (recorder, cluster, API, embedded NATS, fs
// storage) recording a synthetic camera, and checks status codes, field
// names and JSON types, including the interface's odd ones.
func TestAPISpecCalls(t *testing.T) {
	t.Parallel()
	log, _ := testLogger(t)
	cam := startSynth(t, synth.CameraSpec{Path: "Streaming/Channels/101", User: "admin", Pass: "pw"})
	a := startServeNode(t, "api-node", log)
	api := apiClient{t: t, base: a.URL()}
	op := "?token=" + apiOperator

	// Create client (JSON), with a user: api_token returned once.
	v := api.call("POST", "/api/v1/clients"+op, map[string]any{"name": "Acme", "document_type": 2, "document_number": "11.222.333/0001-81",
		"phone": "11 5555-0000", "cep": "01000-000", "address": "Rua A", "address_number": "10", "address_comp": "sala 2",
		"address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "Ana", "email": "ana@acme.com", "phone": "11", "user_type": 2, "password": "password1", "password_conf": "password1"}}}, 201)
	client := shape(t, "client", one(t, "create client", v), map[string]string{"id": "number", "name": "string", "document_type": "string",
		"document_number": "string", "phone": "string", "cep": "string", "address": "string", "address_number": "string", "address_comp": "string",
		"address_nh": "string", "city": "string", "state": "string", "create_url": "string", "create_ip": "string", "created_at": "string",
		"updated_at": "string", "users": "array"})
	user := shape(t, "user", one(t, "users", client["users"]), map[string]string{"id": "number", "user_type_id": "number", "name": "string",
		"email": "string", "phone": "string", "created_at": "string", "updated_at": "string", "update_user_id": "number", "api_token": "string"})
	token := user["api_token"].(string)
	clientID := strconv.Itoa(int(client["id"].(float64)))
	ut := "?token=" + token

	// Create client user (form body).
	v = api.call("POST", "/api/v1/clients/"+clientID+"/users"+op, url.Values{"name": {"Bia"}, "email": {"bia@acme.com"}, "phone": {"1"},
		"user_type": {"1"}, "password": {"password2"}, "password_conf": {"password2"}}, 201)
	bia := shape(t, "client user", one(t, "create user", v), map[string]string{"id": "number", "user_type_id": "number", "email": "string"})
	if _, has := bia["api_token"]; has {
		t.Fatal("create client user returned api_token")
	}
	v = api.call("POST", "/api/v1/auth/token", map[string]any{"email": "bia@acme.com", "password": "password2"}, 200)
	biaToken := shape(t, "token", v, map[string]string{"code": "number", "msg": "string", "api_token": "string"})["api_token"].(string)

	// Camera creation info.
	v = api.call("GET", "/api/v1/cameras/create"+op, nil, 200)
	info := shape(t, "creation info", v, map[string]string{"manufacturer": "array", "plans": "object", "installation_info": "object"})
	shape(t, "manufacturer", info["manufacturer"].([]any)[0], map[string]string{"id": "number", "name": "string", "camera_model": "array"})
	shape(t, "plans", info["plans"], map[string]string{"history_days": "array", "resolutions": "array"})

	// Create camera: RTSP from its parts (model 3's path), demo read as 0.
	host, port, _ := strings.Cut(cam.Addr(), ":")
	v = api.call("POST", "/api/v1/cameras"+op, map[string]any{"description": "Portão", "camera_address": "Rua A, 10", "latitude": "-23.55",
		"longitude": "-46.63", "connection_type": 0, "resolution_id": 2, "history_days": 7, "client_id": client["id"], "model_id": 3,
		"stream": "0", "channel": 1, "dns": host, "port": port, "user": "admin", "pass": "pw", "demo": 1}, 201)
	created := shape(t, "camera created", one(t, "create camera", v), map[string]string{"id": "number", "description": "string",
		"stream_status": "number", "status_description": "string"})
	if created["stream_status"] != float64(2) || created["status_description"] != "OFFLINE" {
		t.Fatalf("new camera: %v", created)
	}
	id := strconv.Itoa(int(created["id"].(float64)))
	// An RTMP camera gets its rtmp_url.
	v = api.call("POST", "/api/v1/cameras"+op, map[string]any{"description": "RTMP", "camera_address": "a", "latitude": "1", "longitude": "1",
		"connection_type": 1, "resolution_id": 1, "history_days": 1, "client_id": client["id"]}, 201)
	shape(t, "rtmp camera", one(t, "rtmp", v), map[string]string{"rtmp_url": "string"})
	// Update camera (PUT), same rules.
	v = api.call("PUT", "/api/v1/cameras/"+id+op, map[string]any{"description": "Portão principal", "camera_address": "Rua A, 10", "latitude": "-23.55",
		"longitude": "-46.63", "connection_type": 0, "resolution_id": 2, "history_days": 7, "client_id": client["id"], "model_id": 3,
		"stream": "0", "dns": host, "port": port, "user": "admin", "pass": "pw"}, 201)
	shape(t, "camera updated", one(t, "update camera", v), map[string]string{"id": "number", "stream_status": "number", "status_description": "string"})

	// The recorder picks the camera up from the registry within seconds;
	// its resolution is known from its first keyframe, which may come a
	// moment after the status turns ONLINE (the connection is up).
	var listed map[string]any
	testenv.WaitFor(t, 30*time.Second, "camera ONLINE in the listing, with its resolution", func() bool {
		v := api.call("GET", "/api/v4/cameras"+ut+"&p=hls", nil, 200)
		data := v.(map[string]any)["data"].([]any)
		for _, d := range data {
			if m := d.(map[string]any); m["id"] == id && m["stream_status_desc"] == "ONLINE" && m["last_recieved_width"] != float64(0) {
				listed = m
				return true
			}
		}
		return false
	})
	list := shape(t, "camera list", api.call("GET", "/api/v4/cameras"+ut, nil, 200), map[string]string{"data": "array", "total": "number",
		"per_page": "number", "current_page": "number", "last_page": "number", "from": "number", "to": "number"})
	if list["per_page"] != float64(10) {
		t.Fatalf("per_page %v", list["per_page"])
	}
	camFields := map[string]string{"id": "string", "description": "string", "live_url": "string", "server_url": "string", "thumb_url": "string",
		"digest": "string", "player_digest": "string", "hash": "string", "client_id": "string", "address": "string", "latitude": "string",
		"longitude": "string", "recording_error": "boolean", "plan": "string", "last_recieved_width": "number", "last_recieved_height": "number",
		"resolution_error": "boolean"}
	shape(t, "listed camera", listed, camFields)
	shape(t, "listed camera", listed, map[string]string{"stream_status_desc": "string"})
	if listed["live_url"] == "" || listed["last_recieved_width"] == float64(0) {
		t.Fatalf("listed camera: %v", listed)
	}
	single := shape(t, "camera", api.call("GET", "/api/camera-player/"+id+ut, nil, 200), camFields)
	shape(t, "camera", single, map[string]string{"status": "string"})
	digest, hash, playerDigest := listed["digest"].(string), listed["hash"].(string), listed["player_digest"].(string)

	// live_url: the WebRTC (WHEP) address by default, LL-HLS with p=hls,
	// in the listing, the single read and the live URL operation.
	if u := listed["live_url"].(string); !strings.Contains(u, "/live/"+id+"/index.m3u8?") {
		t.Errorf("listing with p=hls: live_url %q, want the LL-HLS playlist", u)
	}
	isWHEP := func(what, u string) {
		t.Helper()
		if !strings.Contains(u, "/live/"+id+"/whep?exp=") {
			t.Errorf("%s: live_url %q, want the WHEP address", what, u)
		}
	}
	for _, d := range list["data"].([]any) {
		if m := d.(map[string]any); m["id"] == id {
			isWHEP("listing", m["live_url"].(string))
		}
	}
	isWHEP("single read", single["live_url"].(string))
	if u := shape(t, "camera", api.call("GET", "/api/camera-player/"+id+ut+"&p=hls", nil, 200), camFields)["live_url"].(string); !strings.Contains(u, "/index.m3u8?") {
		t.Errorf("single read with p=hls: live_url %q, want the LL-HLS playlist", u)
	}

	// Live URL operation, both path forms: WHEP by default, and with p=hls
	// the playlist, which plays.
	for _, p := range []string{"/api/camera/" + id + "/live-url", "/api/cameras/" + id + "/live-url/"} {
		lv := shape(t, "live url", api.call("GET", p+ut+"&id="+id, nil, 200), map[string]string{"code": "number", "msg": "string", "data": "string"})
		if lv["code"] != float64(0) {
			t.Fatalf("live url: %v", lv)
		}
		isWHEP("live url operation", lv["data"].(string))
		lv = shape(t, "live url", api.call("GET", p+ut+"&id="+id+"&p=hls", nil, 200), map[string]string{"code": "number", "msg": "string", "data": "string"})
		liveURL := lv["data"].(string)
		testenv.WaitFor(t, 20*time.Second, "live playlist", func() bool {
			res, err := http.Get(liveURL)
			if err != nil {
				return false
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			return res.StatusCode == 200 && strings.HasPrefix(string(b), "#EXTM3U")
		})
	}

	// Recordings, both path forms, from a minute ago; URLs serve the segments.
	since := time.Now().Add(-time.Minute).UnixMilli()
	waitSegments(t, a.Store(), id, 2, 30*time.Second)
	for _, p := range []string{"/camera/" + id + "/recordings", "/cameras/" + id + "/recordings/"} {
		rv := shape(t, "recordings", api.call("GET", p+ut+"&id="+id+"&digest="+digest+"&timeStamp="+strconv.FormatInt(since, 10), nil, 200),
			map[string]string{"CODE": "number", "MSG": "string", "DATA": "array"})
		recs := rv["DATA"].([]any)
		if len(recs) < 2 {
			t.Fatalf("recordings: %v", rv)
		}
		r0 := shape(t, "recording", recs[0], map[string]string{"ini": "string", "start_date": "string", "dur": "string", "file": "string", "url": "string"})
		res, err := http.Get(r0["url"].(string))
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("recording url: %v %v", err, res)
		}
		res.Body.Close()
	}
	api.call("GET", "/camera/"+id+"/recordings"+ut+"&id="+id+"&hash="+hash+"&timeStamp="+strconv.FormatInt(since, 10), nil, 200)

	// Thumbnails (whatever is stored): lists of {ts, url}.
	now := strconv.FormatInt(time.Now().Unix(), 10)
	for _, kind := range []string{"thumbs-hourly", "thumbs-minutes"} {
		tv := api.call("GET", "/api/camera/"+id+"/"+kind+ut+"&id="+id+"&digest="+digest+"&ts="+now, nil, 200)
		l, ok := tv.([]any)
		if !ok {
			t.Fatalf("%s: not a list: %v", kind, tv)
		}
		for _, th := range l {
			shape(t, kind, th, map[string]string{"ts": "number", "url": "string"})
		}
	}

	// Snapshots: GET latest, GET at ts, POST now (code 1 when no node answers the NATS request).
	snapKey := storage.SnapshotKey(id, time.Now())
	if err := a.Store().Put(t.Context(), snapKey, strings.NewReader("jpeg"), 4, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	sv := shape(t, "snapshot", api.call("GET", "/api/v1/cameras/"+id+"/print"+ut+"&id="+id+"&digest="+digest, nil, 200),
		map[string]string{"code": "number", "msg": "string", "print": "string"})
	if sv["code"] != float64(0) || sv["print"] == "" {
		t.Fatalf("snapshot: %v", sv)
	}
	shape(t, "snapshot at ts", api.call("GET", "/api/v1/cameras/"+id+"/print"+ut+"&id="+id+"&ts="+now, nil, 200),
		map[string]string{"code": "number", "msg": "string", "print": "string"})
	shape(t, "snapshot now", api.call("POST", "/api/v1/cameras/"+id+"/print"+ut+"&id="+id, nil, 200),
		map[string]string{"code": "number", "msg": "string", "print": "string"})

	// Downloadable videos: create with query parameters, list, remove.
	start := time.Now().Add(-30 * time.Second).UnixMilli()
	dv := shape(t, "video created", api.call("POST", "/v2/api/drives"+ut+"&camera_id="+id+"&start_at="+strconv.FormatInt(start, 10)+
		"&end_at="+strconv.FormatInt(start+10000, 10)+"&description=door", nil, 200),
		map[string]string{"code": "number", "msg": "string", "video_thumb": "string", "data": "object"})
	vd := shape(t, "video data", dv["data"], map[string]string{"id": "number", "camera_id": "number", "camera_name": "string", "description": "string",
		"start_date": "string", "end_date": "string", "StartDateF": "string", "EndDateF": "string", "create_user_id": "number",
		"update_user_id": "number", "status": "number", "last_thumb": "string", "UrlDrive": "string", "created_at": "object", "updated_at": "object"})
	shape(t, "created_at", vd["created_at"], map[string]string{"date": "string", "timezone_type": "number", "timezone": "string"})
	vid := strconv.Itoa(int(vd["id"].(float64)))
	lv := shape(t, "videos", api.call("GET", "/v2/api/drives"+ut+"&ids="+vid, nil, 200), map[string]string{"code": "number", "msg": "string", "data": "array"})
	shape(t, "video listed", one(t, "videos", lv["data"]), map[string]string{"id": "number", "description": "string", "url": "string",
		"startDateF": "string", "endDateF": "string", "tsStart": "number", "tsEnd": "number", "camera_name": "string", "status": "number",
		"last_thumb": "string", "video_thumb": "string"})
	del := shape(t, "video removed", api.call("POST", "/v2/api/drives/delete/"+vid+ut, nil, 200), map[string]string{"code": "number", "msg": "string", "data": "array"})
	if del["code"] != float64(0) {
		t.Fatalf("delete: %v", del)
	}

	// Events: published on NATS, stored by the API, listed.
	ev, _ := json.Marshal(bus.Event{ID: "e2e-1", Camera: id, Type: 5, AtMs: time.Now().UnixMilli()})
	o := bus.NewOutbox(a.Bus(), 0, nil)
	if err := o.Enqueue(bus.EventSubject(id, 5), ev, "e2e-1"); err != nil {
		t.Fatal(err)
	}
	if err := o.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	o.Close()
	day := time.Now().UTC().Format(time.DateOnly)
	var page map[string]any
	testenv.WaitFor(t, 20*time.Second, "event stored", func() bool {
		page = shape(t, "events page", one(t, "events", api.call("GET", "/api/v1/events"+op+"&start_at="+day+"&end_at="+day+"&event_types=5&camera="+id, nil, 200)),
			map[string]string{"total": "number", "per_page": "number", "current_page": "number", "last_page": "number", "data": "array"})
		return page["total"] == float64(1)
	})
	shape(t, "event", page["data"].([]any)[0], map[string]string{"id": "number", "event_at": "string", "event_type": "number",
		"event_description": "string", "event_url": "string", "camera_id": "number", "camera_description": "string"})

	// Player page by player_digest and by token.
	html := api.call("GET", "/api/camera/"+id+"/player?player_digest="+playerDigest+"&footer=1&controls=1&timeline_interval=1", nil, 200).(string)
	if !strings.Contains(html, "<video") && !strings.Contains(html, "<html") {
		t.Fatalf("player page: %.200s", html)
	}
	api.call("GET", "/api/camera/"+id+"/player"+ut, nil, 200)

	// Block / unblock a user and the client.
	biaID := strconv.Itoa(int(bia["id"].(float64)))
	shape(t, "block user", api.call("GET", "/api/user/block/"+token+"/"+biaID, nil, 200), map[string]string{"code": "number", "msg": "string"})
	api.call("GET", "/api/v4/cameras?token="+biaToken, nil, 403)
	api.call("GET", "/api/user/unblock/"+token+"/"+biaID, nil, 200)
	api.call("GET", "/api/v4/cameras?token="+biaToken, nil, 200)
	shape(t, "block client", api.call("GET", "/api/client/block/"+apiOperator+"/11222333000181", nil, 200), map[string]string{"code": "number", "msg": "string"})
	api.call("GET", "/api/v4/cameras"+ut, nil, 403)
	testenv.WaitFor(t, 20*time.Second, "camera of the blocked client removed from the registry", func() bool {
		_, ok, err := a.Bus().GetCamera(t.Context(), id)
		return err == nil && !ok
	})
	api.call("GET", "/api/client/unblock/"+apiOperator+"/11222333000181", nil, 200)
	api.call("GET", "/api/v4/cameras"+ut, nil, 200)

	// The OpenAPI document.
	shape(t, "openapi", api.call("GET", "/api/openapi.json", nil, 200), map[string]string{"openapi": "string", "paths": "object"})
}

// startServeNode starts a node wired like `vigia serve` (recorder, cluster,
// API, embedded NATS, fs storage, 2 s segments, the apiOperator token) on
// ports chosen at run time, closed when the test ends.
func startServeNode(t *testing.T, id string, log *zap.Logger) *app.App {
	t.Helper()
	c := config.Default()
	c.DataDir = t.TempDir()
	c.NodeID = id
	c.HTTP.Addr = "127.0.0.1:0"
	c.NATS.Listen = "127.0.0.1:0"
	c.RTMP.Addr = "127.0.0.1:0"
	c.OperatorToken = apiOperator
	c.Ingest.AllowPrivateNetworks = true
	c.Recording.SegmentDuration = config.Duration(2 * time.Second)
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	c.HTTP.PublicURL = ""
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return startMode(t, c, app.Mode{Name: "test", Recorder: true, Cluster: true, API: true}, log)
}

// startMode starts an app in mode, closed when the test ends.
func startMode(t *testing.T, c *config.Config, mode app.Mode, log *zap.Logger) *app.App {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	withMetricsToken(c)
	a, err := app.New(ctx, c, mode, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}
