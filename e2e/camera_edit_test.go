package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestCameraEditsTakeEffect: in a node wired like `vigia serve`, a camera
// created through the API with a wrong password reaches ERRO PERMANENTE;
// fixed with PUT, it is ONLINE and recording within seconds; moved to its
// secondary stream, the listing shows the new stream's size; a new
// history_days reaches the segments stored after it.
func TestCameraEditsTakeEffect(t *testing.T) {
	t.Parallel()
	log, _ := testLogger(t)
	cams := startSynth(t,
		synth.CameraSpec{Path: "Streaming/Channels/101", User: "admin", Pass: "pw"},
		synth.CameraSpec{Path: "Streaming/Channels/102", User: "admin", Pass: "pw", Small: true})
	a := startServeNode(t, "edit-node", log)
	api := apiClient{t: t, base: a.URL()}
	op := "?token=" + apiOperator

	v := api.call("POST", "/api/v1/clients"+op, map[string]any{"name": "Edits", "document_type": 1, "document_number": "529.982.247-25",
		"phone": "1", "cep": "01000-000", "address": "Rua B", "address_number": "1", "address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "Op", "email": "op@edits.com", "phone": "1", "user_type": 2, "password": "password1", "password_conf": "password1"}}}, 201)
	client := one(t, "client", v).(map[string]any)
	token := one(t, "users", client["users"]).(map[string]any)["api_token"].(string)
	host, port, _ := strings.Cut(cams.Addr(), ":")
	body := func(pass, stream string, days int) map[string]any {
		return map[string]any{"description": "Gate", "camera_address": "Rua B, 1", "latitude": "-23.5", "longitude": "-46.6",
			"connection_type": 0, "resolution_id": 2, "history_days": days, "client_id": client["id"], "model_id": 3,
			"stream": stream, "channel": 1, "dns": host, "port": port, "user": "admin", "pass": pass}
	}
	created := one(t, "camera", api.call("POST", "/api/v1/cameras"+op, body("wrong", "0", 7), 201)).(map[string]any)
	id := strconv.Itoa(int(created["id"].(float64)))

	listed := func() map[string]any {
		data := api.call("GET", "/api/v4/cameras?token="+token, nil, 200).(map[string]any)["data"].([]any)
		for _, d := range data {
			if m := d.(map[string]any); m["id"] == id {
				return m
			}
		}
		t.Fatalf("camera %s not listed", id)
		return nil
	}
	testenv.WaitFor(t, 30*time.Second, "camera ERRO PERMANENTE with a wrong password", func() bool {
		return listed()["stream_status_desc"] == "ERRO PERMANENTE"
	})

	// The password fixed: ONLINE and recording.
	fixed := time.Now()
	api.call("PUT", "/api/v1/cameras/"+id+op, body("pw", "0", 7), 201)
	testenv.WaitFor(t, 20*time.Second, "camera ONLINE after the password was fixed", func() bool {
		m := listed()
		return m["stream_status_desc"] == "ONLINE" && m["last_recieved_width"] == float64(1280)
	})
	online := time.Since(fixed)
	testenv.WaitFor(t, 20*time.Second, "a segment recorded after the fix", func() bool {
		for _, s := range segments(t, a.Store(), id) {
			if s.StartMs >= fixed.UnixMilli() {
				return true
			}
		}
		return false
	})
	t.Logf("password fixed: ONLINE %v and a segment stored %v after the PUT", online.Round(time.Millisecond), time.Since(fixed).Round(time.Millisecond))

	// The secondary stream: the listing shows its size.
	moved := time.Now()
	api.call("PUT", "/api/v1/cameras/"+id+op, body("pw", "1", 7), 201)
	testenv.WaitFor(t, 20*time.Second, "the secondary stream's size in the listing", func() bool {
		m := listed()
		return m["stream_status_desc"] == "ONLINE" && m["last_recieved_width"] == float64(640)
	})
	t.Logf("stream changed: new size listed %v after the PUT", time.Since(moved).Round(time.Millisecond))

	// history_days: segments stored after the edit carry the new value.
	changed := time.Now()
	api.call("PUT", "/api/v1/cameras/"+id+op, body("pw", "1", 30), 201)
	testenv.WaitFor(t, 20*time.Second, "a segment stored with the new history_days", func() bool {
		for _, s := range segments(t, a.Store(), id) {
			if s.StartMs < changed.Add(time.Second).UnixMilli() {
				continue
			}
			obj, err := a.Store().Stat(t.Context(), s.Key)
			if err == nil && obj.Metadata[storage.MetaRetentionDays] == "30" {
				return true
			}
		}
		return false
	})
}
