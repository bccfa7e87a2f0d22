package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/export"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
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

// TestVerifyCamera: `vigia verify --camera` over an fs store exits 0 when
// the segments match their manifest and 1, naming the key, once one changed.
func TestVerifyCamera(t *testing.T) {
	dir := t.TempDir()
	st, err := fs.New(dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec := integrity.NewRecorder(integrity.RecorderConfig{Store: st})
	start := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	key := storage.SegmentKey("cam", start, time.Minute, 10)
	body := []byte("segment bytes")
	if err := st.Put(ctx, key, bytes.NewReader(body), int64(len(body)), storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Record(ctx, key, int64(len(body)), sha256.Sum256(body)); err != nil {
		t.Fatal(err)
	}
	args := []string{"verify", "--storage.path", dir, "--data_dir", t.TempDir(), "--camera", "cam",
		"--from", "2026-03-10T11:00:00Z", "--to", "2026-03-10T13:00:00Z"}
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("intact: exit %d: %s %s", code, out.String(), errb.String())
	}
	if err := st.Put(ctx, key, bytes.NewReader([]byte("changed bytes")), -1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(args, &out, &errb); code != 1 || !strings.Contains(out.String(), "CHANGED\t"+key) {
		t.Fatalf("changed segment: exit %d: %s %s", code, out.String(), errb.String())
	}
}
