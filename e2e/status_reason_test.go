package e2e

import (
	"bytes"
	"image/color"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// TestStatusReasonOfWrongPassword: in a node wired like `vigia serve`, a
// camera created with a wrong password shows why it is ERRO PERMANENTE in
// the listing and the single read (status_reason camera_auth, the gap
// cause's word, with its fixed text); once the password is fixed and the
// camera ONLINE, neither field is there.
func TestStatusReasonOfWrongPassword(t *testing.T) {
	t.Parallel()
	log, _ := testLogger(t)
	cams := startSynth(t, synth.CameraSpec{Path: "Streaming/Channels/101", User: "admin", Pass: "pw"})
	a := startServeNode(t, "reason-node", log)
	api := apiClient{t: t, base: a.URL()}
	op := "?token=" + apiOperator

	v := api.call("POST", "/api/v1/clients"+op, map[string]any{"name": "Reasons", "document_type": 1, "document_number": "529.982.247-25",
		"phone": "1", "cep": "01000-000", "address": "Rua C", "address_number": "1", "address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "Op", "email": "op@reasons.com", "phone": "1", "user_type": 2, "password": "password1", "password_conf": "password1"}}}, 201)
	client := one(t, "client", v).(map[string]any)
	token := one(t, "users", client["users"]).(map[string]any)["api_token"].(string)
	host, port, _ := strings.Cut(cams.Addr(), ":")
	body := func(pass string) map[string]any {
		return map[string]any{"description": "Door", "camera_address": "Rua C, 1", "latitude": "-23.5", "longitude": "-46.6",
			"connection_type": 0, "resolution_id": 2, "history_days": 7, "client_id": client["id"], "model_id": 3,
			"stream": "0", "channel": 1, "dns": host, "port": port, "user": "admin", "pass": pass}
	}
	created := one(t, "camera", api.call("POST", "/api/v1/cameras"+op, body("wrong"), 201)).(map[string]any)
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
	single := func() map[string]any {
		return api.call("GET", "/api/camera-player/"+id+"?token="+token, nil, 200).(map[string]any)
	}
	testenv.WaitFor(t, 30*time.Second, "camera ERRO PERMANENTE with a wrong password", func() bool {
		return listed()["stream_status_desc"] == "ERRO PERMANENTE"
	})
	for what, m := range map[string]map[string]any{"listing": listed(), "single read": single()} {
		if m["status_reason"] != "camera_auth" || m["status_detail"] != "bad credentials" {
			t.Errorf("%s: status_reason %v, status_detail %v; want camera_auth, bad credentials", what, m["status_reason"], m["status_detail"])
		}
	}
	if s := single(); s["status"] != "ERRO PERMANENTE" {
		t.Errorf("single read status %v", s["status"])
	}

	// The player page shows it over the video.
	b := headless.Chromium(t)
	page := a.URL() + "/api/camera/" + id + "/player?player_digest=" + url.QueryEscape(listed()["player_digest"].(string))
	if err := chromedp.Run(b.Ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	var over struct {
		Hidden              bool
		Text                string
		SX, SY, SW, SH      float64
		VX, VY, VW, VH      float64
		DataStatus, DataWhy string
	}
	readOverlay := func() {
		_ = chromedp.Run(b.Ctx, chromedp.Evaluate(`(() => { const s = document.getElementById('status'), v = document.getElementById('video');
			const a = s.getBoundingClientRect(), r = v.getBoundingClientRect();
			return {Hidden: s.hidden, Text: s.textContent, SX: a.left, SY: a.top, SW: a.width, SH: a.height,
				VX: r.left, VY: r.top, VW: r.width, VH: r.height,
				DataStatus: document.body.dataset.status || '', DataWhy: document.body.dataset.statusReason || ''}; })()`, &over))
	}
	testenv.WaitFor(t, 15*time.Second, "the status over the player's video", func() bool {
		readOverlay()
		return !over.Hidden && over.DataWhy == "camera_auth"
	})
	for _, w := range []string{"ERRO PERMANENTE", "refused the user name or password", "bad credentials"} {
		if !strings.Contains(over.Text, w) {
			t.Errorf("the player's status says %q, lacking %q", over.Text, w)
		}
	}
	if over.SW < 100 || over.SY < over.VY || over.SY+over.SH > over.VY+over.VH || over.SX < over.VX || over.SX+over.SW > over.VX+over.VW+1 {
		t.Errorf("the status box %+v is not over the video", over)
	}
	var shot []byte
	if err := chromedp.Run(b.Ctx, chromedp.Screenshot("#stage", &shot, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("VIGIA_SCREENSHOTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "player-status.png"), shot, 0o644)
	}
	// The box's red (#b71c1c at 90 % over black) where it is, in the
	// picture as the browser drew it; below it, the video's black.
	scale := float64(img.Bounds().Dx()) / over.VW
	c := color.RGBAModel.Convert(img.At(int((over.SW-4)*scale), int(2*scale))).(color.RGBA)
	if c.R < 140 || c.G > 60 || c.B > 60 {
		t.Errorf("screenshot at the status box: %v, want its red", c)
	}
	if c := color.RGBAModel.Convert(img.At(img.Bounds().Dx()/2, img.Bounds().Dy()-int(4*scale))).(color.RGBA); c.R > 60 {
		t.Errorf("screenshot below the status box: %v, want no red", c)
	}

	api.call("PUT", "/api/v1/cameras/"+id+op, body("pw"), 201)
	testenv.WaitFor(t, 20*time.Second, "camera ONLINE after the password was fixed", func() bool {
		return listed()["stream_status_desc"] == "ONLINE"
	})
	for what, m := range map[string]map[string]any{"listing": listed(), "single read": single()} {
		if _, has := m["status_reason"]; has {
			t.Errorf("%s: ONLINE camera has status_reason %v", what, m["status_reason"])
		}
	}
	// The page learns it at its next live URL renewal (every 10 s while
	// the camera is not ONLINE) and takes the box away.
	testenv.WaitFor(t, 30*time.Second, "the status box gone once the camera is ONLINE", func() bool {
		readOverlay()
		return over.Hidden && over.DataStatus == ""
	})
}
