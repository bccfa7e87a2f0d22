package api

import (
	"net/url"
	"strconv"
	"testing"

	"github.com/vigia/vigia/camera"
)

// TestRotatePushKey: the operator rotates an RTMP push camera's key; the
// registry record and the rtmp_url carry the new generation, the old key
// no longer verifies, an edit keeps the generation; a camera that does
// not push is 409, a user 403, a missing camera 404.
func TestRotatePushKey(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		clientID, _, tok := e.clientWithUser("push-key@example.com")
		body := map[string]any{"description": "R", "camera_address": "a", "latitude": "1", "longitude": "2",
			"connection_type": 1, "resolution_id": 1, "history_days": 1, "client_id": clientID}
		r := e.do("POST", op("/api/v1/cameras"), body).want(t, 201)
		rec := r.json(t).([]any)[0].(map[string]any)
		id := strconv.FormatInt(int64(rec["id"].(float64)), 10)
		key := func(raw string) string {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			return u.Query().Get("key")
		}
		k0 := key(rec["rtmp_url"].(string))
		now := e.clock.Now()
		if !camera.CheckPushKeyGen(testKeys, id, k0, 0, now) {
			t.Fatal("the first key is not of generation 0")
		}
		r = e.do("POST", op("/api/v1/cameras/"+id+"/push-key"), nil).want(t, 200)
		k1 := key(r.obj(t)["rtmp_url"].(string))
		if k1 == k0 || !camera.CheckPushKeyGen(testKeys, id, k1, 1, now) || camera.CheckPushKeyGen(testKeys, id, k0, 1, now) {
			t.Fatalf("after the rotation: %s", r.body)
		}
		if cfg, _, err := e.bus.GetCamera(t.Context(), id); err != nil || cfg.PushKeyGen != 1 {
			t.Fatalf("registry record after the rotation: %+v %v", cfg, err)
		}
		// An edit keeps the generation, in the registry and the rtmp_url.
		body["description"] = "R2"
		r = e.do("PUT", op("/api/v1/cameras/"+id), body).want(t, 201)
		if got := key(r.json(t).([]any)[0].(map[string]any)["rtmp_url"].(string)); got != k1 {
			t.Fatalf("rtmp_url after an edit has key %s, want %s", got, k1)
		}
		if cfg, _, _ := e.bus.GetCamera(t.Context(), id); cfg.PushKeyGen != 1 {
			t.Fatalf("an edit reset the generation: %+v", cfg)
		}
		e.do("POST", "/api/v1/cameras/"+id+"/push-key?token="+tok, nil).want(t, 403)
		e.do("POST", op("/api/v1/cameras/99999/push-key"), nil).want(t, 404)
		rtsp := strconv.FormatInt(e.camera(clientID), 10)
		e.do("POST", op("/api/v1/cameras/"+rtsp+"/push-key"), nil).want(t, 409)
	})
}
