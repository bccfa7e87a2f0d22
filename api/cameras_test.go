package api

import (
	"strconv"
	"strings"
	"testing"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/status"
)

func TestCameraRules(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		clientID, _, _ := e.clientWithUser("cam@example.com")
		with := func(base map[string]any, kv ...any) map[string]any {
			m := map[string]any{}
			for k, v := range base {
				m[k] = v
			}
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i+1] == nil {
					delete(m, kv[i].(string))
				} else {
					m[kv[i].(string)] = kv[i+1]
				}
			}
			return m
		}
		rtsp := rtspCamera(clientID, "203.0.113.7")
		tests := []struct {
			name string
			body map[string]any
			bad  []string
		}{
			{"empty", map[string]any{}, []string{"description", "camera_address", "latitude", "longitude", "connection_type", "resolution_id", "history_days", "client_id"}},
			{"rtsp without parts", with(rtsp, "dns", nil, "port", nil, "user", nil, "pass", nil, "model_id", nil, "stream", nil), []string{"dns", "port", "user", "pass", "model_id", "stream"}},
			{"unknown plan values", with(rtsp, "history_days", 2, "resolution_id", 99, "model_id", 99), []string{"history_days", "resolution_id", "model_id"}},
			{"unknown client", with(rtsp, "client_id", 9999), []string{"client_id"}},
			{"bad port and stream", with(rtsp, "port", "99999", "stream", "2"), []string{"port", "stream"}},
			{"bad types", with(rtsp, "connection_type", "rtsp", "latitude", "north"), []string{"connection_type", "latitude"}},
			{"typed url wrong scheme", with(rtsp, "typed_url", "http://203.0.113.7/x"), []string{"typed_url"}},
			{"private typed url", with(rtsp, "typed_url", "rtsp://192.168.1.10:554/x"), []string{"typed_url"}},
			{"loopback dns", with(rtsp, "dns", "127.0.0.1"), []string{"dns"}},
			{"localhost name", with(rtsp, "dns", "localhost"), []string{"dns"}},
			{"link-local", with(rtsp, "dns", "169.254.1.1"), []string{"dns"}},
			{"p2p without serial", with(rtsp, "connection_type", 2, "stream", nil), []string{"p2p_serial_number", "p2p_password", "stream"}},
			{"sound not 0 or 1", with(rtsp, "sound", 3), []string{"sound"}},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do("POST", op("/api/v1/cameras"), tc.body).want(t, 422)
				errs := r.obj(t)["errors"].(map[string]any)
				for _, f := range tc.bad {
					if _, ok := errs[f]; !ok {
						t.Errorf("422 does not name %s: %s", f, r.body)
					}
				}
			})
		}

		// A valid RTSP camera: 201, OFFLINE, registry written with the sealed URL.
		r := e.do("POST", op("/api/v1/cameras"), with(rtsp, "demo", "yes", "channel", 2)).want(t, 201)
		rec := r.json(t).([]any)[0].(map[string]any)
		if rec["stream_status"] != float64(2) || rec["status_description"] != "OFFLINE" || rec["description"] != "Cam" {
			t.Fatalf("created: %s", r.body)
		}
		if _, has := rec["rtmp_url"]; has {
			t.Fatal("rtmp_url on an RTSP camera")
		}
		id := strconv.FormatInt(int64(rec["id"].(float64)), 10)
		cfg, ok, err := e.bus.GetCamera(t.Context(), id)
		if err != nil || !ok {
			t.Fatalf("registry: %v %v", ok, err)
		}
		src, err := camera.Open(testKeys, cfg.SealedURL)
		if err != nil || src != "rtsp://admin:p%40ss%3Aword@203.0.113.7:554/Streaming/Channels/201" {
			t.Fatalf("sealed url %q %v", src, err)
		}
		if cfg.ClientID != clientID || cfg.HistoryDays != 7 || cfg.Width != 1280 || cfg.Trusted {
			t.Fatalf("registry record: %+v", cfg)
		}
		if strings.Contains(string(r.body), "p@ss") {
			t.Fatal("password in the response")
		}

		// RTMP push: rtmp_url. P2P: sealed password.
		r = e.do("POST", op("/api/v1/cameras"), map[string]any{"description": "R", "camera_address": "a", "latitude": "1", "longitude": "2",
			"connection_type": 1, "resolution_id": 1, "history_days": 1, "client_id": clientID, "sound": 1}).want(t, 201)
		if u, _ := r.json(t).([]any)[0].(map[string]any)["rtmp_url"].(string); !strings.HasPrefix(u, "rtmp://127.0.0.1:1935/live/") {
			t.Fatalf("rtmp_url: %s", r.body)
		}
		r = e.do("POST", op("/api/v1/cameras"), map[string]any{"description": "P", "camera_address": "a", "latitude": "1", "longitude": "2",
			"connection_type": 2, "resolution_id": 1, "history_days": 3, "client_id": clientID, "stream": "1",
			"p2p_serial_number": "ABC123", "p2p_password": "pw"}).want(t, 201)
		pid := strconv.FormatInt(int64(r.json(t).([]any)[0].(map[string]any)["id"].(float64)), 10)
		if p2p, _, _ := e.bus.GetCamera(t.Context(), pid); p2p.P2PSerial != "ABC123" || p2p.P2PSealedPassword == "" || p2p.P2PSealedPassword == "pw" {
			t.Fatalf("p2p record: %+v", p2p)
		}

		// Update: 201 with the current status; 404 for an unknown id; 400 for a bad one.
		publishStatus(t, e.bus, status.Status{Camera: id, Code: status.Online, Width: 1280, Height: 720})
		r = e.do("PUT", op("/api/v1/cameras/"+id), with(rtsp, "description", "Renamed")).want(t, 201)
		if rec := r.json(t).([]any)[0].(map[string]any); rec["description"] != "Renamed" || rec["stream_status"] != float64(1) || rec["status_description"] != "ONLINE" {
			t.Fatalf("updated: %s", r.body)
		}
		e.do("PUT", op("/api/v1/cameras/9999"), rtsp).want(t, 404)
		e.do("PUT", op("/api/v1/cameras/abc"), rtsp).want(t, 400)

		// Creation info lists what create accepts.
		r = e.do("GET", op("/api/v1/cameras/create"), nil).want(t, 200)
		info := r.obj(t)
		if len(info["manufacturer"].([]any)) == 0 || info["plans"].(map[string]any)["history_days"].([]any)[0] != float64(1) ||
			info["installation_info"].(map[string]any)["installation_local"].(map[string]any)["1"] == nil {
			t.Fatalf("creation info: %s", r.body)
		}
	})
}

func TestPrivateNetworksAllowed(t *testing.T) {
	e := newEnv(t, "sqlite", func(c *Config) { c.AllowPrivateNetworks = true })
	clientID, _, _ := e.clientWithUser("lan@example.com")
	body := rtspCamera(clientID, "127.0.0.1")
	e.do("POST", op("/api/v1/cameras"), body).want(t, 201)
}
