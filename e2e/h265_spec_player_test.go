package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// TestH265CameraInSpecPlayer: an H.265 camera created through the API
// plays in the spec's player page (player_digest) in headless Chromium,
// which decodes no H.265: live over WebRTC from the node's transcoder, and
// recorded from the H.264 renditions of its segments, each advancing 3 s
// within 25 s.
func TestH265CameraInSpecPlayer(t *testing.T) {
	t.Parallel()
	log, _ := testLogger(t)
	cam := startSynth(t, synth.CameraSpec{Path: "Streaming/Channels/101", User: "admin", Pass: "pw", Codec: synth.CodecH265, Small: true})
	c := config.Default()
	c.DataDir = t.TempDir()
	c.NodeID = "h265-node"
	c.HTTP.Addr = "127.0.0.1:0"
	c.NATS.Listen = "127.0.0.1:0"
	c.RTMP.Addr = "127.0.0.1:0"
	c.OperatorToken = apiOperator
	c.Ingest.AllowPrivateNetworks = true
	c.Recording.SegmentDuration = config.Duration(2 * time.Second)
	c.WebRTC.Interfaces = "lo"
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
		"phone": "11 5555-0000", "cep": "01000-000", "address": "Rua A", "address_number": "10", "address_comp": "sala 2",
		"address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "Ana", "email": "ana@acme.com", "phone": "11", "user_type": 2, "password": "password1", "password_conf": "password1"}}}, 201)
	client := one(t, "create client", v).(map[string]any)
	host, port, _ := strings.Cut(cam.Addr(), ":")
	v = api.call("POST", "/api/v1/cameras"+op, map[string]any{"description": "H.265", "camera_address": "Rua A, 10", "latitude": "-23.55",
		"longitude": "-46.63", "connection_type": 0, "resolution_id": 2, "history_days": 7, "client_id": client["id"], "model_id": 3,
		"stream": "0", "channel": 1, "dns": host, "port": port, "user": "admin", "pass": "pw"}, 201)
	id := strconv.Itoa(int(one(t, "create camera", v).(map[string]any)["id"].(float64)))
	var digest string
	testenv.WaitFor(t, 30*time.Second, "camera ONLINE in the listing", func() bool {
		for _, d := range api.call("GET", "/api/v4/cameras"+op, nil, 200).(map[string]any)["data"].([]any) {
			if m := d.(map[string]any); m["id"] == id && m["stream_status_desc"] == "ONLINE" {
				digest = m["player_digest"].(string)
				return true
			}
		}
		return false
	})
	started := time.Now()

	b := headless.Chromium(t)
	type state struct {
		Transport string  `json:"transport"`
		Rendition string  `json:"rendition"`
		Reason    string  `json:"reason"`
		Time      float64 `json:"time"`
		HEVC      bool    `json:"hevc"`
	}
	read := func() state {
		var s state
		if err := chromedp.Run(b.Ctx, chromedp.Evaluate(`({transport: document.body.dataset.transport || '',
  rendition: document.body.dataset.rendition || '', reason: document.body.dataset.unplayable || '',
  time: document.getElementById('video').currentTime, hevc: window.vigiaPlayability.hevc().any})`, &s)); err != nil {
			t.Fatalf("read page: %v", err)
		}
		if s.HEVC {
			t.Skip("this browser decodes H.265")
		}
		if s.Reason != "" {
			t.Fatalf("the page cannot play: %s", s.Reason)
		}
		return s
	}
	play := func(what, query string) state {
		t.Helper()
		if err := chromedp.Run(b.Ctx, chromedp.Navigate(a.URL()+"/api/camera/"+id+"/player?player_digest="+digest+query)); err != nil {
			t.Fatal(err)
		}
		var first state
		testenv.WaitFor(t, 25*time.Second, what+": the video advancing 3 s", func() bool {
			s := read()
			if first.Time == 0 {
				first = s
			}
			return s.Time > 0 && s.Time-first.Time >= 3
		})
		return read()
	}
	s := play("live", "")
	if s.Transport != "webrtc" {
		t.Errorf("live transport %q; want webrtc (the H.264 rendition)", s.Transport)
	}
	// Recorded, from a time already recorded.
	testenv.WaitFor(t, 30*time.Second, "6 s recorded", func() bool { return time.Since(started) > 6*time.Second })
	s = play("recorded", fmt.Sprintf("&ts=%d&delay=0", started.Unix()+1))
	if s.Rendition != "h264" {
		t.Errorf("recorded without H.264 renditions (dataset.rendition %q)", s.Rendition)
	}
}
