package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigia/vigia/export"
	"github.com/vigia/vigia/sign"
)

// TestVerifyVideo: `vigia verify CLIP MANIFEST --key` exits 0 for a video
// and its signed manifest, and 1 once a byte of the video changed.
func TestVerifyVideo(t *testing.T) {
	keys, err := sign.New([]byte("0123456789abcdef-verify"))
	if err != nil {
		t.Fatal(err)
	}
	key := keys.ExportKey()
	video := []byte("not really an mp4, but bytes to hash")
	sum := sha256.Sum256(video)
	m := &export.Manifest{Version: export.ManifestVersion, Video: "videos/1.mp4", VideoSize: int64(len(video)), VideoSHA256: hex.EncodeToString(sum[:]), Camera: "7"}
	body, sig := m.Sign(key, sign.KeyID(key.Public().(ed25519.PublicKey)))
	dir := t.TempDir()
	files := map[string][]byte{"1.mp4": video, "1.manifest.json": body, "1.manifest.sig": sig, "export.pub": sign.PublicKeyPEM(key.Public().(ed25519.PublicKey))}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"verify", filepath.Join(dir, "1.mp4"), filepath.Join(dir, "1.manifest.json"), "--key", filepath.Join(dir, "export.pub")}
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "OK") {
		t.Fatalf("intact: exit %d: %s %s", code, out.String(), errb.String())
	}
	video[3] ^= 1
	if err := os.WriteFile(filepath.Join(dir, "1.mp4"), video, 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(args, &out, &errb); code != 1 || !strings.HasPrefix(out.String(), "FAILED") {
		t.Fatalf("changed video: exit %d: %s", code, out.String())
	}
}
