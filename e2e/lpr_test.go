package e2e

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestLPRPushThroughNode: a Hikvision ANPR push (multipart: anpr.xml, the
// plate crop, the scene) to a camera's lpr_url on a whole node is listed by
// GET /api/v1/events as one licence plate event (type 7) with its plate,
// confidence and the scene as its image; pushed again (a camera's retry),
// it is still one; a wrong key is refused.
func TestLPRPushThroughNode(t *testing.T) {
	t.Parallel()
	log, _ := testLogger(t)
	cam := startSynth(t, synth.CameraSpec{Path: "lpr", User: "admin", Pass: "pw"})
	a := startServeNode(t, "lpr-node", log)
	api := apiClient{t: t, base: a.URL()}
	op := "?token=" + apiOperator

	v := api.call("POST", "/api/v1/clients"+op, map[string]any{"name": "Acme", "document_type": 2, "document_number": "11.222.333/0001-81",
		"phone": "11 5555-0000", "cep": "01000-000", "address": "Rua A", "address_number": "10", "address_comp": "",
		"address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "Ana", "email": "ana@acme.com", "phone": "11", "user_type": 2, "password": "password1", "password_conf": "password1"}}}, 201)
	client := one(t, "create client", v).(map[string]any)
	v = api.call("POST", "/api/v1/cameras"+op, map[string]any{"description": "Portaria", "camera_address": "Rua A, 10", "latitude": "-23.55",
		"longitude": "-46.63", "connection_type": 0, "resolution_id": 2, "history_days": 7, "client_id": client["id"], "model_id": 3,
		"stream": "0", "typed_url": cam.URL("lpr")}, 201)
	created := one(t, "create camera", v).(map[string]any)
	id := strconv.Itoa(int(created["id"].(float64)))
	push, _ := created["lpr_url"].(string)
	if strings.HasPrefix(push, "/") {
		push = a.URL() + push
	}
	if !strings.Contains(push, "/api/v1/lpr/"+id+"/") {
		t.Fatalf("lpr_url %q", push)
	}

	xmlDoc, err := os.ReadFile("../api/lpr/testdata/hikvision_anpr.xml")
	if err != nil {
		t.Fatal(err)
	}
	scene := lprJPEG(t, 320, 180)
	body, ct := lprMultipart(t, xmlDoc, lprJPEG(t, 117, 44), scene)
	post := func(u string) int {
		res, err := http.Post(u, ct, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode
	}
	if code := post(push[:strings.LastIndex(push, "/")+1] + "AAAA" + push[strings.LastIndex(push, "/")+1:]); code != http.StatusForbidden {
		t.Fatalf("a wrong key: %d, want 403", code)
	}
	for range 2 {
		if code := post(push); code != http.StatusOK {
			t.Fatalf("push: %d", code)
		}
	}

	// The read's own time, 2025-03-10T12:29:41-03:00.
	day := "2025-03-10"
	list := func(types string) []any {
		page := one(t, "events", api.call("GET", "/api/v1/events"+op+"&start_at="+day+"&end_at="+day+"&event_types="+types+"&camera="+id, nil, 200)).(map[string]any)
		return page["data"].([]any)
	}
	testenv.WaitFor(t, 30*time.Second, "the plate read listed", func() bool { return len(list("7")) > 0 })
	got := list("7")
	if len(got) != 1 {
		t.Fatalf("%d plate events, want 1: %v", len(got), got)
	}
	e := got[0].(map[string]any)
	if e["event_type"] != float64(7) || e["plate"] != "BRA2E19" || e["plate_confidence"] != float64(97) || e["event_at"] == "" {
		t.Fatalf("event %v", e)
	}
	if n := len(list("1,2,4,5,13")); n != 0 {
		t.Fatalf("%d events of other types", n)
	}
	img, _ := e["event_url"].(string)
	if strings.HasPrefix(img, "/") {
		img = a.URL() + img
	}
	res, err := http.Get(img)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !bytes.Equal(data, scene) {
		t.Fatalf("event image %q: %d, %d bytes, want the scene (%d bytes)", img, res.StatusCode, len(data), len(scene))
	}
}

// lprMultipart is a push as Hikvision cameras make it.
func lprMultipart(t *testing.T, xmlDoc, plate, scene []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range []struct {
		name, ct string
		data     []byte
	}{{"anpr.xml", "text/xml", xmlDoc}, {"licensePlatePicture.jpg", "image/jpeg", plate}, {"detectionPicture.jpg", "image/jpeg", scene}} {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+p.name+`"; filename="`+p.name+`"`)
		h.Set("Content-Type", p.ct)
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(p.data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), mw.FormDataContentType()
}

func lprJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	img.Set(0, 0, color.White)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
