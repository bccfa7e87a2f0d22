package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	recordCodec(t, st, camera, synth.CodecH264, key, runs...)
}

// recordCodec is recordRuns with the fixture of codec.
func recordCodec(t *testing.T, st storage.Store, camera, codec string, key ed25519.PrivateKey, runs ...[2]time.Time) {
	t.Helper()
	clip, err := synth.Fixture(codec, true)
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

// TestExportCodec: `vigia export --codec h264` of H.265 recordings writes
// a video ffprobe reads as H.264, over the range, which FFmpeg decodes
// without an error; without the flag it stays H.265; another codec is
// refused before anything is read.
func TestExportCodec(t *testing.T) {
	const secret = "0123456789abcdef-cli-export"
	keys, err := sign.New([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := fs.New(dir, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	recordCodec(t, st, "cam", synth.CodecH265, keys.ExportKey(), [2]time.Time{t0, t0.Add(20 * time.Second)})
	out := t.TempDir()
	for _, tc := range []struct{ flag, want string }{{"", "hevc"}, {"--codec=h264", "h264"}} {
		clip := filepath.Join(out, tc.want+".mp4")
		args := []string{"export", "--storage.path", dir, "--data_dir", t.TempDir(), "--security.secret", secret, "--camera", "cam",
			"--from", "2026-03-10T12:00:00Z", "--to", "2026-03-10T12:00:15Z", "--out", clip}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("export %s: exit %d: %s %s", tc.flag, code, stdout.String(), stderr.String())
		}
		probe, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name:format=duration",
			"-of", "default=nw=1:nk=1", clip).Output()
		if err != nil {
			t.Fatalf("ffprobe %s: %v", clip, err)
		}
		f := strings.Fields(string(probe))
		if len(f) != 2 || f[0] != tc.want {
			t.Fatalf("export %q: ffprobe says %q, want video %s", tc.flag, probe, tc.want)
		}
		if d, _ := strconv.ParseFloat(f[1], 64); d < 14.5 || d > 15.5 {
			t.Errorf("export %q lasts %s s, want 15", tc.flag, f[1])
		}
		if msg, err := exec.Command("ffmpeg", "-v", "error", "-i", clip, "-f", "null", "-").CombinedOutput(); err != nil || len(msg) > 0 {
			t.Errorf("ffmpeg decoding %s: %v %s", clip, err, msg)
		}
	}
	var stdout, stderr bytes.Buffer
	args := []string{"export", "--storage.path", dir, "--codec", "vp9", "--camera", "cam", "--from", "0", "--to", "1", "--out", filepath.Join(out, "x.mp4")}
	if code := run(args, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), `--codec "vp9"`) {
		t.Fatalf("--codec vp9: exit %d: %s", code, stderr.String())
	}
}
