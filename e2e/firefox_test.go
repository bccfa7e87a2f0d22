package e2e

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/testenv"
)

// TestFirefoxPlaysH264AndH265: Debian's firefox-esr, headless and driven
// over WebDriver BiDi (a browser the project did not write), plays an H.264
// and an H.265 camera from GStreamer's RTSP server, created through the
// API, in the spec's player page (player_digest), live and recorded: the
// video advances 3 s within 25 s in each case. This Firefox has no
// OpenH264 plugin, so it takes neither codec over WebRTC: live falls back
// to LL-HLS at once, without a WHEP request, and the time from opening the page to its first
// picture is logged (docs/benchmarks.md). Firefox on Linux decodes HEVC
// through the system's FFmpeg, so the H.265 camera plays untouched.
func TestFirefoxPlaysH264AndH265(t *testing.T) {
	t.Parallel()
	base := gstRTSPServer(t)
	log, _ := testLogger(t)
	c := config.Default()
	c.DataDir = t.TempDir()
	c.NodeID = "firefox-node"
	c.HTTP.Addr = "127.0.0.1:0"
	c.NATS.Listen = "127.0.0.1:0"
	c.RTMP.Addr = "127.0.0.1:0"
	c.OperatorToken = apiOperator
	c.Ingest.AllowPrivateNetworks = true
	c.Recording.SegmentDuration = config.Duration(2 * time.Second)
	c.WebRTC.Interfaces = "lo"
	// Two models whose RTSP paths are the GStreamer server's mounts.
	c.API.CameraModels = []config.CameraModel{
		{ID: 1, Name: "GStreamer H.264", ManufacturerID: 4, RTSPPath: "/h264"},
		{ID: 2, Name: "GStreamer H.265", ManufacturerID: 4, RTSPPath: "/h265"},
	}
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
	host, port, _ := strings.Cut(strings.TrimPrefix(base, "rtsp://"), ":")
	ids := map[string]string{}
	for codec, model := range map[string]int{"h264": 1, "h265": 2} {
		v = api.call("POST", "/api/v1/cameras"+op, map[string]any{"description": codec, "camera_address": "Rua A, 10", "latitude": "-23.55",
			"longitude": "-46.63", "connection_type": 0, "resolution_id": 2, "history_days": 7, "client_id": client["id"], "model_id": model,
			"stream": "0", "channel": 1, "dns": host, "port": port, "user": "admin", "pass": "pw"}, 201)
		ids[codec] = strconv.Itoa(int(one(t, "create camera", v).(map[string]any)["id"].(float64)))
	}
	digests := map[string]string{}
	testenv.WaitFor(t, 30*time.Second, "both cameras ONLINE in the listing", func() bool {
		for _, d := range api.call("GET", "/api/v4/cameras"+op, nil, 200).(map[string]any)["data"].([]any) {
			m := d.(map[string]any)
			for codec, id := range ids {
				if m["id"] == id && m["stream_status_desc"] == "ONLINE" {
					digests[codec] = m["player_digest"].(string)
				}
			}
		}
		return len(digests) == len(ids)
	})
	started := time.Now()
	page := func(codec, query string) string {
		return a.URL() + "/api/camera/" + ids[codec] + "/player?player_digest=" + digests[codec] + query
	}
	// Recorded from a time already recorded: the live cases take longer
	// than that.
	rec := fmt.Sprintf("&ts=%d&delay=0", started.Unix()+1)
	res := firefoxPlay(t,
		firefoxCase{Name: "h264 live", URL: page("h264", "")},
		firefoxCase{Name: "h265 live", URL: page("h265", "")},
		firefoxCase{Name: "h264 recorded", URL: page("h264", rec)},
		firefoxCase{Name: "h265 recorded", URL: page("h265", rec)},
	)
	for _, r := range res {
		t.Logf("%s: advanced %.1f s, first picture %d ms after opening the page, transport %q, rendition %q, webrtc error %q, MSE HEVC %v, WebRTC codecs %v",
			r.Name, r.Advanced, r.FirstFrameMs, r.Transport, r.Rendition, r.WebRTCError, r.HEVC.MSE, r.RTCCodecs)
		if !r.OK {
			t.Errorf("%s: the video advanced %.1f s within 25 s (readyState %d, unplayable %q); want 3 s", r.Name, r.Advanced, r.Ready, r.Unplayable)
		}
		if r.Unplayable != "" {
			t.Errorf("%s: the page says it cannot play: %s", r.Name, r.Unplayable)
		}
		rtcH264 := slices.Contains(r.RTCCodecs, "h264")
		switch live := strings.HasSuffix(r.Name, "live"); {
		case live && rtcH264 && r.Transport != "webrtc":
			t.Errorf("%s: transport %q; want webrtc (this Firefox receives H.264 over WebRTC)", r.Name, r.Transport)
		case live && !rtcH264 && r.Transport != "hls":
			t.Errorf("%s: transport %q; want hls (this Firefox takes neither codec over WebRTC)", r.Name, r.Transport)
		case live && !rtcH264 && r.WebRTCTries != 0:
			// The fallback is at once: a WHEP session tried first costs the
			// time until no picture comes (4 to 8 s).
			t.Errorf("%s: the page opened %d WHEP sessions before LL-HLS (%s); want none, the browser lists neither codec", r.Name, r.WebRTCTries, r.WebRTCError)
		}
		if r.HEVC.MSE && r.Rendition != "" {
			t.Errorf("%s: rendition %q; want the camera's video as it is (this Firefox's MSE decodes H.265)", r.Name, r.Rendition)
		}
	}
}
