package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// rtmpClip builds an MP4 (H.264 720p + AAC 16 kHz) from the synth fixtures.
func rtmpClip(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "clip.mp4")
	fx := filepath.Join("..", "synth", "fixtures")
	cmd := exec.Command("ffmpeg", "-v", "error", "-f", "h264", "-r", "15", "-i", filepath.Join(fx, "h264_720p.h264"),
		"-i", filepath.Join(fx, "aac_16k_mono.aac"), "-c", "copy", "-shortest", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	return out
}

// ffmpegPush publishes clip in a loop, in real time, to url until the test
// ends.
func ffmpegPush(t *testing.T, clip, url string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-re", "-stream_loop", "-1", "-i", clip, "-c", "copy", "-f", "flv", url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("ffmpeg push to %s: %s", strings.Split(url, "?")[0], stderr.String())
		}
	})
}

// TestRTMP records RTMP cameras through one node: FFmpeg pushes H.264+AAC
// (sound on and off), the synthetic publisher pushes H.265 as Enhanced
// RTMP and as legacy codec id 12, a pulled RTMP camera drops and comes
// back (status 2 then 1), and a publisher with a wrong key is refused with
// nothing stored.
func TestRTMP(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("ffmpeg not found: run make deps")
	}
	m := testenv.SharedMinIO(t)
	c := s3Config(t, m)
	c.RTMP.Addr = "127.0.0.1:0"
	c.Ingest.BackoffMax = 2000000000 // 2 s
	log, logs := testLogger(t)
	a := startApp(t, c, log)
	st := openS3(t, c)
	pull := synth.NewRTMPServer(synth.RTMPServerConfig{Streams: []synth.RTMPStreamSpec{{Name: "cam", Audio: true}}})
	if err := pull.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pull.Close)
	w := watchStatus(t, a.Bus(), "pulled")

	cams := []ingest.Camera{
		{ID: "push-av", URL: "rtmp-push:", Sound: true},
		{ID: "push-v", URL: "rtmp-push:", Sound: false},
		{ID: "hevc-enh", URL: "rtmp-push:"},
		{ID: "hevc-12", URL: "rtmp-push:"},
		{ID: "locked", URL: "rtmp-push:"},
		{ID: "pulled", URL: pull.URL("cam"), Sound: true, Trusted: true},
	}
	for _, cam := range cams {
		if err := a.RecordCamera(cam); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, 10*time.Second, "the push server listening", func() bool { return a.RTMPServer().Addr() != "" })
	if u := a.PushURL("push-av"); !strings.HasPrefix(u, "rtmp://127.0.0.1:") || !strings.Contains(u, "/live/push-av?key=") {
		t.Fatalf("push url %q", u)
	}

	// A wrong key is refused at publish time.
	const badKey = "0123456789abcdef0123456789abcdef"
	wrong := a.PushURL("locked")[:strings.Index(a.PushURL("locked"), "key=")+4] + badKey
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := synth.PublishRTMP(ctx, wrong, synth.RTMPStreamSpec{})
	cancel()
	if !errors.Is(err, synth.ErrRTMPRefused) {
		t.Fatalf("publish with a wrong key: %v, want refused", err)
	}
	cmd := exec.Command("ffmpeg", "-v", "error", "-re", "-i", rtmpClip(t), "-t", "2", "-c", "copy", "-f", "flv", strings.Split(wrong, "?")[0])
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("ffmpeg published without a key: %s", out)
	}

	clip := rtmpClip(t)
	ffmpegPush(t, clip, a.PushURL("push-av"))
	ffmpegPush(t, clip, a.PushURL("push-v"))
	pub := func(cam string, spec synth.RTMPStreamSpec) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = synth.PublishRTMP(ctx, a.PushURL(cam), spec)
		}()
		t.Cleanup(func() { cancel(); <-done })
	}
	pub("hevc-enh", synth.RTMPStreamSpec{Codec: synth.CodecH265, Enhanced: true})
	pub("hevc-12", synth.RTMPStreamSpec{Codec: synth.CodecH265})

	want := map[string]struct{ video, audio string }{
		"push-av":  {"h264", "aac"},
		"push-v":   {"h264", ""},
		"hevc-enh": {"hevc", ""},
		"hevc-12":  {"hevc", ""},
		"pulled":   {"h264", "aac"},
	}
	for cam, wv := range want {
		segs := waitSegments(t, st, cam, 2, 60*time.Second)
		p := ffprobe(t, download(t, st, segs[1].Key))
		if p.Video.Codec != wv.video || p.Audio != wv.audio || p.Video.Width != 1280 || p.Video.Height != 720 || !p.Video.FirstKey || p.Video.Frames < 20 {
			t.Errorf("camera %s: segment %+v, want %s %s 1280x720 starting at a keyframe", cam, p, wv.video, wv.audio)
		}
	}

	// Nothing from the refused publisher reached storage, while the others
	// recorded.
	if segs := segments(t, st, "locked"); len(segs) != 0 {
		t.Errorf("camera with a refused publisher has %d segments", len(segs))
	}
	if s, _ := a.Recorder().Status("locked"); s.Code == status.Online {
		t.Errorf("camera with a refused publisher is ONLINE")
	}
	_, goodKey, _ := strings.Cut(a.PushURL("push-av"), "key=")
	if strings.Contains(logs.String(), badKey) || strings.Contains(logs.String(), goodKey) {
		t.Errorf("a stream key appears in the log")
	}
	if !strings.Contains(logs.String(), "rtmp publisher refused") {
		t.Errorf("refusal not logged")
	}

	// The pulled camera drops: OFFLINE, then ONLINE again.
	pull.Drop("cam")
	testenv.WaitFor(t, 15*time.Second, "pulled camera OFFLINE", func() bool {
		s, _ := a.Recorder().Status("pulled")
		return s.Code == status.Offline
	})
	testenv.WaitFor(t, 20*time.Second, "pulled camera ONLINE again", func() bool {
		s, _ := a.Recorder().Status("pulled")
		return s.Code == status.Online
	})
	testenv.WaitFor(t, 5*time.Second, "status messages", func() bool {
		tr := w.transitions()
		return len(tr) > 0 && tr[len(tr)-1] == status.Online
	})
	if got := fmt.Sprint(w.transitions()); !strings.HasSuffix(got, "1 2 1]") {
		t.Errorf("pulled camera status transitions %s, want ... 1 2 1", got)
	}
}
