package lpr

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"
	"mime/multipart"
	"net/textproto"
	"os"
	"strings"
	"testing"
	"time"
)

// testJPEG returns a small gray JPEG of level g.
func testJPEG(t testing.TB, g uint8) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 16, 16))
	for i := range img.Pix {
		img.Pix[i] = g
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hikvisionBody returns a multipart/form-data body as Hikvision cameras
// push an ANPR read: anpr.xml, then the plate crop and the whole scene.
func hikvisionBody(t testing.TB, xmlDoc, plate, scene []byte) (body []byte, contentType string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	part := func(name, ct string, data []byte) {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+name+`"; filename="`+name+`"`)
		h.Set("Content-Type", ct)
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(data)
	}
	part("anpr.xml", "text/xml", xmlDoc)
	part("licensePlatePicture.jpg", "image/jpeg", plate)
	part("detectionPicture.jpg", "image/jpeg", scene)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), mw.FormDataContentType()
}

func TestParse(t *testing.T) {
	xmlDoc, err := os.ReadFile("testdata/hikvision_anpr.xml")
	if err != nil {
		t.Fatal(err)
	}
	pic := testJPEG(t, 1)
	for _, tc := range []struct {
		name, ct, body string
		plate          string
		conf           float64
		noPlate, bad   bool
	}{
		{name: "hikvision xml", ct: "application/xml", body: string(xmlDoc), plate: "BRA2E19", conf: 97},
		{name: "sniffed xml", ct: "", body: string(xmlDoc), plate: "BRA2E19", conf: 97},
		{name: "json", ct: "application/json", body: `{"plate":" ABC1D23 ","confidence":50}`, plate: "ABC1D23", conf: 50},
		{name: "sniffed json", ct: "text/plain", body: `{"plate":"ABC1D23","at_ms":1741620581000}`, plate: "ABC1D23"},
		{name: "json picture", ct: "application/json", body: `{"plate":"A","picture":"` + base64.StdEncoding.EncodeToString(pic) + `"}`, plate: "A"},
		{name: "other alarm", ct: "text/xml", body: `<EventNotificationAlert><eventType>VMD</eventType></EventNotificationAlert>`, noPlate: true},
		{name: "anpr without plate", ct: "text/xml", body: `<EventNotificationAlert><eventType>ANPR</eventType><ANPR><licensePlate> </licensePlate></ANPR></EventNotificationAlert>`, noPlate: true},
		{name: "json without plate", ct: "application/json", body: `{"confidence":50}`, bad: true},
		{name: "bad confidence", ct: "text/xml", body: `<EventNotificationAlert><eventType>ANPR</eventType><ANPR><licensePlate>A</licensePlate><confidenceLevel>x</confidenceLevel></ANPR></EventNotificationAlert>`, bad: true},
		{name: "negative confidence", ct: "application/json", body: `{"plate":"A","confidence":-1}`, bad: true},
		{name: "long plate", ct: "application/json", body: `{"plate":"` + strings.Repeat("A", 33) + `"}`, bad: true},
		{name: "control in plate", ct: "application/json", body: `{"plate":"A\u0007B"}`, bad: true},
		{name: "picture not jpeg", ct: "application/json", body: `{"plate":"A","picture":"aGVsbG8="}`, bad: true},
		{name: "bad time", ct: "application/json", body: `{"plate":"A","at":"yesterday"}`, bad: true},
		{name: "not xml", ct: "text/xml", body: `<EventNotificationAlert>`, bad: true},
		{name: "neither", ct: "", body: `plate=A`, bad: true},
		{name: "multipart without boundary", ct: "multipart/form-data", body: `x`, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd, err := Parse(tc.ct, []byte(tc.body))
			switch {
			case tc.noPlate:
				if err != ErrNoPlate {
					t.Fatalf("err %v, want ErrNoPlate", err)
				}
			case tc.bad:
				if err == nil || err == ErrNoPlate {
					t.Fatalf("err %v, want a refusal", err)
				}
			case err != nil:
				t.Fatal(err)
			case rd.Plate != tc.plate || rd.Confidence != tc.conf:
				t.Fatalf("read %+v", rd)
			}
		})
	}
	// Hikvision multipart: the detection picture is the event's, and the
	// read time keeps the camera's offset.
	scene := testJPEG(t, 250)
	body, ct := hikvisionBody(t, xmlDoc, testJPEG(t, 5), scene)
	rd, err := Parse(ct, body)
	if err != nil || !bytes.Equal(rd.Picture, scene) || !rd.At.Equal(time.Date(2025, 3, 10, 15, 29, 41, 0, time.UTC)) {
		t.Fatalf("multipart: %v %v", rd.At, err)
	}
	// A JSON event part with one JPEG part.
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	w, _ := mw.CreateFormField("event")
	_, _ = w.Write([]byte(`{"plate":"QWE1R23","confidence":70}`))
	w, _ = mw.CreateFormFile("picture", "read.jpg")
	_, _ = w.Write(pic)
	_ = mw.Close()
	rd, err = Parse(mw.FormDataContentType(), b.Bytes())
	if err != nil || rd.Plate != "QWE1R23" || !bytes.Equal(rd.Picture, pic) {
		t.Fatalf("multipart JSON: %+v %v", rd.Plate, err)
	}
}
