package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/onvif/onviftest"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestONVIFCamera creates a camera through the API with only its address,
// port and credentials (model 6, ONVIF Profile S): the node asks the fake
// ONVIF camera for its stream address and records the synthetic camera it
// names; the fake's motion, tamper, field, digital input and sound events
// are each listed once by GET /api/v1/events with their type.
func TestONVIFCamera(t *testing.T) {
	t.Parallel()
	log, _ := testLogger(t)
	rtsp := startSynth(t, synth.CameraSpec{Path: "Streaming/Channels/101", User: "admin", Pass: "pw"})
	hik, _ := onviftest.VendorByName("hikvision")
	fake, err := onviftest.Start(onviftest.Options{Vendor: hik, User: "admin", Password: "pw", ClockOffset: 90 * time.Minute,
		StreamURI: "rtsp://" + rtsp.Addr() + "/Streaming/Channels/101", MaxPullWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	a := startServeNode(t, "onvif-node", log)
	api := apiClient{t: t, base: a.URL()}
	op := "?token=" + apiOperator

	v := api.call("POST", "/api/v1/clients"+op, map[string]any{"name": "Acme", "document_type": 2, "document_number": "11.222.333/0001-81",
		"phone": "11 5555-0000", "cep": "01000-000", "address": "Rua A", "address_number": "10", "address_comp": "",
		"address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "Ana", "email": "ana@acme.com", "phone": "11", "user_type": 2, "password": "password1", "password_conf": "password1"}}}, 201)
	client := one(t, "create client", v).(map[string]any)
	token := client["users"].([]any)[0].(map[string]any)["api_token"].(string)

	host, port, _ := strings.Cut(strings.TrimPrefix(fake.Base, "http://"), ":")
	v = api.call("POST", "/api/v1/cameras"+op, map[string]any{"description": "ONVIF", "camera_address": "Rua A, 10", "latitude": "-23.55",
		"longitude": "-46.63", "connection_type": 0, "resolution_id": 2, "history_days": 7, "client_id": client["id"], "model_id": 6,
		"stream": "0", "dns": host, "port": port, "user": "admin", "pass": "pw"}, 201)
	id := strconv.Itoa(int(one(t, "create camera", v).(map[string]any)["id"].(float64)))

	testenv.WaitFor(t, 60*time.Second, "the ONVIF camera ONLINE", func() bool {
		data := api.call("GET", "/api/v4/cameras?token="+token, nil, 200).(map[string]any)["data"].([]any)
		for _, d := range data {
			if m := d.(map[string]any); m["id"] == id && m["stream_status_desc"] == "ONLINE" {
				return true
			}
		}
		return false
	})
	testenv.WaitFor(t, 30*time.Second, "the node's subscription", func() bool {
		return fake.Subscriptions() == 1 && fake.Calls("PullMessages") > 0
	})
	kinds := map[string]int{"motion": 5, "tamper": 1, "field": 4, "input": 2, "sound": 13}
	for k := range kinds {
		if err := fake.Set(k, true); err != nil {
			t.Fatal(err)
		}
		pulls := fake.Calls("PullMessages")
		testenv.WaitFor(t, 10*time.Second, "the start pulled", func() bool { return fake.Calls("PullMessages") > pulls })
		if err := fake.Set(k, false); err != nil {
			t.Fatal(err)
		}
	}
	day := time.Now().UTC().Format(time.DateOnly)
	list := func(types string) []any {
		page := one(t, "events", api.call("GET", "/api/v1/events"+op+"&start_at="+day+"&end_at="+day+"&event_types="+types+"&camera="+id, nil, 200)).(map[string]any)
		return page["data"].([]any)
	}
	testenv.WaitFor(t, 30*time.Second, "five events listed", func() bool { return len(list("1,2,4,5,13")) == 5 })
	for k, typ := range kinds {
		got := list(strconv.Itoa(typ))
		if len(got) != 1 || got[0].(map[string]any)["event_type"] != float64(typ) {
			t.Errorf("%s: events of type %d: %v", k, typ, got)
		}
	}
	if n := len(list("7")); n != 0 {
		t.Errorf("%d events of type 7", n)
	}
}
