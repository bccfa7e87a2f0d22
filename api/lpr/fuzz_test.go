package lpr

import (
	"os"
	"testing"
)

// FuzzParse checks that Parse never panics and that
// what it accepts is a plate read the ingress can store.
func FuzzParse(f *testing.F) {
	xmlDoc, err := os.ReadFile("testdata/hikvision_anpr.xml")
	if err != nil {
		f.Fatal(err)
	}
	body, ct := hikvisionBody(f, xmlDoc, testJPEG(f, 5), testJPEG(f, 250))
	f.Add(ct, body)
	f.Add("application/xml", xmlDoc)
	f.Add("application/json", []byte(`{"plate":"ABC1D23","confidence":97.5,"at":"2025-03-10T15:29:41Z","picture":"/9j/2w=="}`))
	f.Add("", []byte(`<EventNotificationAlert><eventType>ANPR</eventType><ANPR><licensePlate>A</licensePlate></ANPR></EventNotificationAlert>`))
	f.Add("multipart/form-data; boundary=b", []byte("--b\r\nContent-Disposition: form-data; name=\"event\"\r\n\r\n{\"plate\":\"A\"}\r\n--b--\r\n"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		rd, err := Parse(contentType, body)
		if err != nil {
			return
		}
		if rd.Plate == "" || len(rd.Plate) > 4*MaxPlateLen || rd.Confidence < 0 || rd.Confidence > 100 {
			t.Fatalf("accepted %+v", rd)
		}
		if rd.Picture != nil && !IsJPEG(rd.Picture) {
			t.Fatal("accepted a picture that is not a JPEG")
		}
	})
}
