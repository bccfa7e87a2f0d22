package export

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/live/transcode"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

// TestExportInH264: a job asking for H.264 of H.265 recordings (with AAC)
// stores an MP4 whose video ffprobe reads as H.264 and whose audio is the
// recorded AAC, over the requested range; its signed manifest verifies
// against the stored bytes, hashes the recorded segments and counts the
// segments transcoded. The same range without the option stays H.265, and
// a node that cannot transcode fails the H.264 job saying so.
func TestExportInH264(t *testing.T) {
	if _, err := os.Stat("/usr/bin/ffprobe"); err != nil {
		t.Fatal("ffprobe not found: run make deps")
	}
	if !transcode.Available() {
		t.Fatal("this build cannot transcode (cgo and libavcodec are needed)")
	}
	ctx := context.Background()
	st := newFS(t)
	record(t, st, "7", "h265", true, 4*time.Second, recRun{t0, 12 * time.Second})
	keys, err := sign.New([]byte("0123456789abcdef0123"))
	if err != nil {
		t.Fatal(err)
	}
	b := openBus(t, "")
	s := startService(t, ServiceConfig{Bus: b, Store: st, Node: "a", SignKey: keys.ExportKey(), H264: transcode.Rendition()})
	from, to := t0.Add(2*time.Second), t0.Add(10*time.Second)
	read := func(key string) []byte {
		rc, err := st.Get(ctx, key, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(rc); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	probeStored := func(key string) probe {
		p := filepath.Join(t.TempDir(), "video.mp4")
		if err := os.WriteFile(p, read(key), 0o600); err != nil {
			t.Fatal(err)
		}
		return ffprobe(t, p, "-count_packets", "-show_streams", "-show_format")
	}
	codecs := func(p probe) map[string]string {
		m := map[string]string{}
		for _, s := range p.Streams {
			m[s.CodecType] = s.CodecName
		}
		return m
	}

	for _, tc := range []struct {
		name       string
		id         int64
		codec      string
		wantVideo  string
		transcoded bool
	}{
		{"h264 asked", 1, CodecH264, "h264", true},
		{"as recorded", 2, "", "hevc", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Jobs().Submit(ctx, Job{ID: tc.id, Camera: "7", StartMs: from.UnixMilli(), EndMs: to.UnixMilli(), Codec: tc.codec}); err != nil {
				t.Fatal(err)
			}
			done := waitState(t, s.Jobs(), tc.id, "job done", func(s State) bool { return s.Status != StatusMaking })
			if done.Status != StatusDone {
				t.Fatalf("state %+v", done)
			}
			p := probeStored(done.Key)
			if c := codecs(p); c["video"] != tc.wantVideo || c["audio"] != "aac" {
				t.Errorf("codecs %v; want video %s and audio aac", c, tc.wantVideo)
			}
			if d := seconds(t, p.Format.Duration); d < to.Sub(from) || d > to.Sub(from)+2*time.Second {
				t.Errorf("duration %s; want the range's %s plus at most a GOP", d, to.Sub(from))
			}
			m, err := VerifyVideo(bytes.NewReader(read(done.Key)), read(ManifestKey(tc.id)), read(SignatureKey(tc.id)), keys.ExportKey().Public().(ed25519.PublicKey))
			if err != nil {
				t.Fatal(err)
			}
			if tc.transcoded != (m.Transcoded == len(m.Segments)) || !tc.transcoded && m.Transcoded != 0 {
				t.Errorf("manifest counts %d of %d segments transcoded", m.Transcoded, len(m.Segments))
			}
			for _, seg := range m.Segments {
				if sum := sha256.Sum256(read(seg.Key)); hex.EncodeToString(sum[:]) != seg.SHA256 {
					t.Errorf("segment %s: manifest sha256 %s is not that of its recorded bytes", seg.Key, seg.SHA256)
				}
			}
		})
	}

	t.Run("node without transcoder", func(t *testing.T) {
		s := startService(t, ServiceConfig{Bus: openBus(t, ""), Store: st, Node: "b"})
		if _, err := s.Jobs().Submit(ctx, Job{ID: 3, Camera: "7", StartMs: from.UnixMilli(), EndMs: to.UnixMilli(), Codec: CodecH264}); err != nil {
			t.Fatal(err)
		}
		done := waitState(t, s.Jobs(), 3, "job finished", func(s State) bool { return s.Status != StatusMaking })
		if done.Status != StatusFailed || !strings.Contains(done.Reason, ErrNoTranscoder.Error()) {
			t.Errorf("state %+v; want failed: %v", done, ErrNoTranscoder)
		}
		if _, err := st.Stat(ctx, VideoKey(3)); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("video of the failed job: %v", err)
		}
	})
}

// TestDecodeJobCodec: a job names no codec or h264; any other is refused.
func TestDecodeJobCodec(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		ok        bool
	}{
		{"none", `{"id":1,"camera":"7","start_ms":1,"end_ms":2}`, true},
		{"h264", `{"id":1,"camera":"7","start_ms":1,"end_ms":2,"codec":"h264"}`, true},
		{"other", `{"id":1,"camera":"7","start_ms":1,"end_ms":2,"codec":"vp9"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeJob([]byte(tc.msg))
			if (err == nil) != tc.ok || err != nil && !errors.Is(err, ErrInvalidJob) {
				t.Errorf("DecodeJob: %v", err)
			}
		})
	}
}
