package camera

import (
	"strings"
	"testing"
)

func TestSealRoundTrip(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	url := "rtsp://admin:hunter2@cam.example:554/stream"
	s, err := Seal(secret, url)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s, "hunter2") {
		t.Fatal("sealed value shows the password")
	}
	got, err := Open(secret, s)
	if err != nil || got != url {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := Open([]byte("another secret of enough length!"), s); err == nil {
		t.Error("opened with the wrong secret")
	}
	if _, err := Open(secret, s[:len(s)-2]+"AA"); err == nil {
		t.Error("opened a tampered value")
	}
	if _, err := Open(secret, "!!"); err == nil {
		t.Error("opened garbage")
	}
}

func FuzzOpen(f *testing.F) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	s, _ := Seal(secret, "rtsp://u:p@h/x")
	f.Add(s)
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, in string) {
		_, _ = Open(secret, in)
	})
}
