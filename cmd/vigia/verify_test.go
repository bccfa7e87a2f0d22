package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
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

// TestVerifyCameraSignatures: `vigia verify --camera` checks the hour
// manifests' signatures with the key of security.secret; after a rotation
// the old manifests verify with security.previous_secret or with the old
// public key given by --key, and are reported (KEY) with neither.
func TestVerifyCameraSignatures(t *testing.T) {
	const oldSecret, newSecret = "0123456789abcdef-old-secret", "0123456789abcdef-new-secret"
	oldKeys, err := sign.New([]byte(oldSecret))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := fs.New(dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec := integrity.NewRecorder(integrity.RecorderConfig{Store: st, SignKey: oldKeys.ExportKey()})
	start := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	key := storage.SegmentKey("cam", start, time.Minute, 10)
	body := []byte("segment bytes")
	if err := st.Put(ctx, key, bytes.NewReader(body), int64(len(body)), storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Record(ctx, key, int64(len(body)), sha256.Sum256(body)); err != nil {
		t.Fatal(err)
	}
	oldPEM := filepath.Join(t.TempDir(), "old.pem")
	if err := os.WriteFile(oldPEM, sign.PublicKeyPEM(oldKeys.ExportKey().Public().(ed25519.PublicKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"verify", "--storage.path", dir, "--data_dir", t.TempDir(), "--camera", "cam",
		"--from", "2026-03-10T11:00:00Z", "--to", "2026-03-10T13:00:00Z"}
	mkey := integrity.ManifestKey("cam", start)
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"its secret", []string{"--security.secret", oldSecret}, 0, "1 signatures verified"},
		{"rotated, previous secret", []string{"--security.secret", newSecret, "--security.previous_secret", oldSecret,
			"--security.previous_until", "2026-04-01T00:00:00Z"}, 0, "1 signatures verified"},
		{"rotated, old public key", []string{"--security.secret", newSecret, "--key", oldPEM}, 0, "1 signatures verified"},
		{"rotated, old key not given", []string{"--security.secret", newSecret}, 1, "KEY\t" + mkey},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(append(slices.Clone(base), c.args...), &out, &errb); code != c.code || !strings.Contains(out.String(), c.want) {
				t.Fatalf("exit %d, want %d with %q: %s %s", code, c.code, c.want, out.String(), errb.String())
			}
		})
	}
}
