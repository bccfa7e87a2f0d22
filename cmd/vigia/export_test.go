package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/synth"
)

// recordRuns writes camera's segments for each run [start, start+dur)
// into st through the real segmenter, fed with the synthetic H.264
// fixture, each segment's hash recorded in its hour manifest signed with
// key, as a node's upload does.
func recordRuns(t *testing.T, st storage.Store, camera string, key ed25519.PrivateKey, runs ...[2]time.Time) {
	t.Helper()
	clip, err := synth.Fixture("h264", true)
	if err != nil {
		t.Fatal(err)
	}
	rec := integrity.NewRecorder(integrity.RecorderConfig{Store: st, SignKey: key})
	sp, err := segmenter.NewSpool(segmenter.SpoolConfig{
		Dir: t.TempDir(),
		Upload: func(ctx context.Context, seg segmenter.Segment, body io.ReadSeeker) error {
			k := storage.SegmentKey(seg.Camera, seg.Start, seg.Duration, seg.InitSize)
			hr := integrity.NewHashReader(body)
			if err := st.Put(ctx, k, hr, seg.Size, storage.PutOptions{}); err != nil {
				return err
			}
			sum, _ := hr.Sum(seg.Size)
			return rec.Record(ctx, k, seg.Size, sum)
		},
		RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond,
		Log: zap.NewNop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	w := segmenter.NewWriter(segmenter.WriterConfig{Camera: camera, SegmentDuration: 10 * time.Second, Spool: sp, Log: zap.NewNop()})
	vt := clip.Track()
	frame := time.Duration(float64(time.Second) / clip.FPS)
	for _, run := range runs {
		if err := w.SetTracks([]*media.Track{&vt}); err != nil {
			t.Fatal(err)
		}
		for i := 0; time.Duration(i)*frame < run[1].Sub(run[0]); i++ {
			d := time.Duration(i) * frame
			u := clip.Units[i%len(clip.Units)]
			u.DTS, u.PTS, u.Time, u.Track = d, d, run[0].Add(d), 0
			if err := w.WriteUnit(&u); err != nil {
				t.Fatal(err)
			}
		}
		w.Discontinuity()
	}
	w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := sp.Drain(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestExportWritesSignedManifest: `vigia export` of a range with a gap
// writes the clip and, beside it, its manifest and raw signature under the
// deployment key of security.secret; `vigia verify CLIP MANIFEST` accepts
// them with the public key, and refuses a manifest with one changed byte.
func TestExportWritesSignedManifest(t *testing.T) {
	const secret = "0123456789abcdef-cli-export"
	keys, err := sign.New([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	key := keys.ExportKey()
	dir := t.TempDir()
	st, err := fs.New(dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	recordRuns(t, st, "cam", key, [2]time.Time{t0, t0.Add(20 * time.Second)}, [2]time.Time{t0.Add(30 * time.Second), t0.Add(50 * time.Second)})

	out := t.TempDir()
	clip := filepath.Join(out, "clip.mp4")
	args := []string{"export", "--storage.path", dir, "--data_dir", t.TempDir(), "--security.secret", secret, "--camera", "cam",
		"--from", "2026-03-10T12:00:00Z", "--to", "2026-03-10T12:00:45Z", "--out", clip}
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("export: exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	manifest := filepath.Join(out, "clip.manifest.json")
	body, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatalf("no manifest beside the clip: %v", err)
	}
	for _, want := range []string{`"video": "clip.mp4"`, `"camera": "cam"`, `"cause": "unknown"`, `"key_id": "` + sign.KeyID(key.Public().(ed25519.PublicKey)) + `"`, `"manifest": "rec/cam/2026/03/10/12/manifest.json"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("manifest lacks %s:\n%s", want, body)
		}
	}
	pem := filepath.Join(out, "export.pub")
	if err := os.WriteFile(pem, sign.PublicKeyPEM(key.Public().(ed25519.PublicKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	verify := []string{"verify", clip, manifest, "--key", pem}
	stdout.Reset()
	if code := run(verify, &stdout, &stderr); code != 0 || !strings.HasPrefix(stdout.String(), "OK") || !strings.Contains(stdout.String(), "1 gaps") {
		t.Fatalf("verify: exit %d: %s %s", code, stdout.String(), stderr.String())
	}
	body[len(body)/2] ^= 1
	if err := os.WriteFile(manifest, body, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code := run(verify, &stdout, &stderr); code != 1 || !strings.HasPrefix(stdout.String(), "FAILED") {
		t.Fatalf("changed manifest: exit %d: %s", code, stdout.String())
	}
}
