package rtmp

import (
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/sign"
)

// TestStreamKey: a stream key is the camera id signed for purpose
// sign.RTMPKey without expiry; the same id signed for any other purpose,
// another camera's key or a key of another secret is refused; during a
// rotation's overlap the previous secret's key is accepted, after it not.
func TestStreamKey(t *testing.T) {
	keys, err := sign.New(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	key := PushKey(testSecret, "cam1")
	if key != keys.Sign(sign.RTMPKey, time.Time{}, "cam1") || len(key) != sign.SigLen {
		t.Fatalf("stream key %q is not the documented signature", key)
	}
	if !CheckKey(testSecret, "cam1", key) || !CheckKeyOf(keys, "cam1", key, now) {
		t.Fatal("the camera's key refused")
	}
	for _, p := range sign.Purposes() {
		if p != sign.RTMPKey && CheckKey(testSecret, "cam1", keys.Sign(p, time.Time{}, "cam1")) {
			t.Errorf("a key signed for %q accepted", p)
		}
	}
	if CheckKey(testSecret, "cam1", PushKey(testSecret, "cam2")) || CheckKey(testSecret, "cam1", "") {
		t.Error("another camera's key, or none, accepted")
	}
	newSecret := []byte("a new secret 0123456789abcdef")
	rotated, err := sign.New(newSecret)
	if err != nil {
		t.Fatal(err)
	}
	if rotated, err = rotated.WithPrevious(testSecret, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !CheckKeyOf(rotated, "cam1", key, now) || CheckKeyOf(rotated, "cam1", key, now.Add(time.Hour)) {
		t.Error("the previous secret's key: want accepted during the overlap only")
	}
	if camera.PushKey(rotated, "cam1") != PushKey(newSecret, "cam1") {
		t.Error("keys are not made under the current secret")
	}
	if PushKey([]byte("short"), "cam1") != "" || CheckKey([]byte("short"), "cam1", "") {
		t.Error("a short secret made or checked a key")
	}
}
