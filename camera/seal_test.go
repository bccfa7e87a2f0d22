package camera

import (
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/sign"
)

func keysOf(t testing.TB, secret string) *sign.Keys {
	t.Helper()
	k, err := sign.New([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestSealRoundTrip(t *testing.T) {
	k := keysOf(t, "0123456789abcdef0123456789abcdef")
	url := "rtsp://admin:hunter2@cam.example:554/stream"
	s, err := Seal(k, url)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(s, "hunter2") {
		t.Fatal("sealed value shows the password")
	}
	got, err := Open(k, s)
	if err != nil || got != url {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if _, err := Open(keysOf(t, "another secret of enough length!"), s); err == nil {
		t.Error("opened with the wrong secret")
	}
	if _, err := Open(k, s[:len(s)-2]+"AA"); err == nil {
		t.Error("opened a tampered value")
	}
	if _, err := Open(k, "!!"); err == nil {
		t.Error("opened garbage")
	}
	if Stale(k, s) {
		t.Error("a value sealed under the current secret is stale")
	}
}

// TestSealRotation: after a rotation, values sealed under the previous
// secret still open (also after the overlap: nothing sealed is lost) and
// are reported stale; new values are sealed under the new secret.
func TestSealRotation(t *testing.T) {
	old := keysOf(t, "old-secret-0123456789abcdef")
	sealedOld, err := Seal(old, "rtsp://u:p@h/x")
	if err != nil {
		t.Fatal(err)
	}
	rot, err := keysOf(t, "new-secret-0123456789abcdef").WithPrevious([]byte("old-secret-0123456789abcdef"), time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Open(rot, sealedOld); err != nil || got != "rtsp://u:p@h/x" {
		t.Fatalf("open under the previous secret: %q, %v", got, err)
	}
	if !Stale(rot, sealedOld) {
		t.Error("a value sealed under the previous secret is not stale")
	}
	sealedNew, err := Seal(rot, "rtsp://u:p@h/x")
	if err != nil {
		t.Fatal(err)
	}
	if Stale(rot, sealedNew) {
		t.Error("a new value is stale")
	}
	if _, err := Open(old, sealedNew); err == nil {
		t.Error("a new value opens with the previous secret alone: it was sealed under it")
	}
}

func FuzzOpen(f *testing.F) {
	k := keysOf(f, "0123456789abcdef0123456789abcdef")
	s, _ := Seal(k, "rtsp://u:p@h/x")
	f.Add(s)
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, in string) {
		_, _ = Open(k, in)
	})
}
