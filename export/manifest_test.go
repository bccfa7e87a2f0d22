package export

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// sha256Check is the documented check of a video's hash with sha256sum
// (docs/export.md), run by sh.
const sha256Check = `echo "$(grep -o '"video_sha256": "[0-9a-f]*"' "$2" | cut -d'"' -f4)  $1" | sha256sum -c`

// TestManifestVerifiesWithExternalTools: the signed manifest of a video
// across a gap names the gap with its cause and the source segments with
// their hour manifests; it verifies with VerifyVideo and with sha256sum and
// openssl; one changed byte in the video or the manifest fails both.
func TestManifestVerifiesWithExternalTools(t *testing.T) {
	for _, tool := range []string{"sha256sum", "openssl", "sh", "grep", "cut"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed: %v", tool, err)
		}
	}
	ctx := context.Background()
	st := newFS(t)
	record(t, st, "7", "h264", false, 20*time.Second, recRun{t0, 60 * time.Second}, recRun{t0.Add(80 * time.Second), 60 * time.Second})
	// The hour manifests, as the upload hook writes them.
	rec := integrity.NewRecorder(integrity.RecorderConfig{Store: st})
	for o, err := range storage.Walk(ctx, st, storage.CameraSegmentsPrefix("7")) {
		if err != nil {
			t.Fatal(err)
		}
		rc, err := st.Get(ctx, o.Key, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		sum, n, err := integrity.HashAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Record(ctx, o.Key, n, sum); err != nil {
			t.Fatal(err)
		}
	}
	gap := storage.GapKey("7", t0.Add(60*time.Second), 20*time.Second, string(status.CauseCameraOffline))
	if err := st.Put(ctx, gap, bytes.NewReader([]byte("{}")), 2, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}

	cat := catalogue.New(catalogue.Config{Store: st})
	req := Request{Camera: "7", Start: t0.Add(30 * time.Second), End: t0.Add(110 * time.Second)}
	clip, err := Build(ctx, st, req, Options{Catalogue: cat})
	if err != nil {
		t.Fatal(err)
	}
	defer clip.Close()
	m, err := NewManifest(ctx, st, cat, VideoKey(9), req, clip, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Gaps) != 1 || m.Gaps[0].Cause != string(status.CauseCameraOffline) {
		t.Errorf("gaps %+v, want one camera_offline", m.Gaps)
	}
	if len(m.Segments) == 0 || len(m.Chain) != 2 { // the range spans two hours
		t.Errorf("segments %d, chain %+v", len(m.Segments), m.Chain)
	}
	for _, s := range m.Segments {
		_, startMs, _, _, _ := storage.ParseSegmentKey(s.Key)
		if s.Manifest != integrity.ManifestKey("7", time.UnixMilli(startMs)) {
			t.Errorf("segment %s not matched in its hour manifest: %q", s.Key, s.Manifest)
		}
	}
	keys, err := sign.New([]byte("0123456789abcdef0123"))
	if err != nil {
		t.Fatal(err)
	}
	key := keys.ExportKey()
	pub := key.Public().(ed25519.PublicKey)
	body, sig := m.Sign(key, sign.KeyID(pub))

	dir := t.TempDir()
	video, man, sigf, pubf := filepath.Join(dir, "9.mp4"), filepath.Join(dir, "9.manifest.json"), filepath.Join(dir, "9.manifest.sig"), filepath.Join(dir, "export.pub")
	videoBytes := make([]byte, clip.Size())
	if _, err := clip.ReadAt(videoBytes, 0); err != nil {
		t.Fatal(err)
	}
	for p, b := range map[string][]byte{video: videoBytes, man: body, sigf: sig, pubf: sign.PublicKeyPEM(pub)} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	hashOK := func() bool {
		return exec.Command("sh", "-c", sha256Check, "sh", video, man).Run() == nil
	}
	sigOK := func() bool {
		return exec.Command("openssl", "pkeyutl", "-verify", "-pubin", "-inkey", pubf, "-rawin", "-in", man, "-sigfile", sigf).Run() == nil
	}
	ours := func() error {
		v, _ := os.ReadFile(video)
		b, _ := os.ReadFile(man)
		_, err := VerifyVideo(bytes.NewReader(v), b, sig, pub)
		return err
	}
	if !hashOK() || !sigOK() {
		t.Fatalf("intact: sha256sum %v, openssl %v", hashOK(), sigOK())
	}
	if err := ours(); err != nil {
		t.Fatalf("intact: %v", err)
	}
	flip := func(p string, off int) {
		b, _ := os.ReadFile(p)
		b[off] ^= 1
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	flip(video, len(videoBytes)/2)
	if hashOK() || !errors.Is(ours(), ErrNotVerified) {
		t.Errorf("a changed byte in the video passed: sha256sum %v, VerifyVideo %v", hashOK(), ours())
	}
	flip(video, len(videoBytes)/2)
	flip(man, bytes.Index(body, []byte(`"camera"`))+12)
	if sigOK() || !errors.Is(ours(), ErrNotVerified) {
		t.Errorf("a changed byte in the manifest passed: openssl %v, VerifyVideo %v", sigOK(), ours())
	}
}

// TestServiceStoresSignedManifest: a job of a service with a signing key
// stores the manifest and its detached signature beside the video, and
// they verify the stored video.
func TestServiceStoresSignedManifest(t *testing.T) {
	ctx := context.Background()
	st := newFS(t)
	record(t, st, "7", "h264", false, 20*time.Second, recRun{t0, 60 * time.Second})
	keys, err := sign.New([]byte("0123456789abcdef0123"))
	if err != nil {
		t.Fatal(err)
	}
	s := startService(t, ServiceConfig{Bus: openBus(t, ""), Store: st, Node: "a", SignKey: keys.ExportKey()})
	if _, err := s.Jobs().Submit(ctx, Job{ID: 5, Camera: "7", StartMs: t0.Add(5 * time.Second).UnixMilli(), EndMs: t0.Add(50 * time.Second).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	done := waitState(t, s.Jobs(), 5, "job 5 done", func(s State) bool { return s.Status != StatusMaking })
	if done.Status != StatusDone || done.ManifestKey != ManifestKey(5) {
		t.Fatalf("done state %+v", done)
	}
	read := func(key string) []byte {
		rc, err := st.Get(ctx, key, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		var b bytes.Buffer
		if _, err := b.ReadFrom(rc); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	m, err := VerifyVideo(bytes.NewReader(read(done.Key)), read(ManifestKey(5)), read(SignatureKey(5)), keys.ExportKey().Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if m.Camera != "7" || m.Video != done.Key || len(m.Segments) == 0 {
		t.Errorf("manifest %+v", m)
	}
	if err := s.Jobs().Remove(ctx, 5); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{ManifestKey(5), SignatureKey(5)} {
		if _, err := st.Stat(ctx, k); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s after the job's removal: %v", k, err)
		}
	}
}
