package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/testenv"
)

// TestFFmpegPublishedStream: FFmpeg publishes an H.264 + AAC clip to an
// RTSP server (tcp and udp), and Vigia pulls it from there and records it.
func TestFFmpegPublishedStream(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("ffmpeg not found: run make deps")
	}
	m := testenv.SharedMinIO(t)
	r := &relay{}
	port := testenv.FreePort(t)
	// UDP needs an even RTP port and the next one for RTCP: try a few pairs.
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		rtpPort := 20000 + 2*rand.IntN(10000)
		r.server = &gortsplib.Server{
			Handler:        r,
			RTSPAddress:    fmt.Sprintf("127.0.0.1:%d", port),
			UDPRTPAddress:  fmt.Sprintf("127.0.0.1:%d", rtpPort),
			UDPRTCPAddress: fmt.Sprintf("127.0.0.1:%d", rtpPort+1),
		}
		if err = r.server.Start(); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.server.Close)

	// A clip with a keyframe every second, looped by FFmpeg in real time.
	clip := filepath.Join(t.TempDir(), "clip.mp4")
	if out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error",
		"-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
		"-t", "4", "-c:v", "libx264", "-g", "25", "-bf", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", clip).CombinedOutput(); err != nil {
		t.Fatalf("making clip: %v: %s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pub := exec.CommandContext(ctx, "ffmpeg", "-hide_banner", "-loglevel", "error", "-re", "-stream_loop", "-1", "-i", clip,
		"-c", "copy", "-f", "rtsp", "-rtsp_transport", "tcp", fmt.Sprintf("rtsp://127.0.0.1:%d/live", port))
	if err := pub.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = pub.Wait()
	})
	testenv.WaitFor(t, 15*time.Second, "ffmpeg publishing", r.ready)

	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	// The same stream read over TCP and over UDP.
	for id, tr := range map[string]string{"ffmpeg": "tcp", "ffmpeg-udp": "udp"} {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: fmt.Sprintf("rtsp://127.0.0.1:%d/live", port), Transport: tr, Sound: true, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	st := openS3(t, c)
	t.Cleanup(func() {
		if t.Failed() {
			s, _ := a.Recorder().Status("ffmpeg")
			t.Logf("camera status: %+v", s)
		}
	})
	segs := waitSegments(t, st, "ffmpeg", 3, 60*time.Second)
	for _, s := range segs {
		p := ffprobe(t, download(t, st, s.Key))
		if p.Video.Codec != "h264" || p.Video.Width != 640 || p.Video.Height != 360 || !p.Video.FirstKey || p.Audio != "aac" {
			t.Errorf("%s: %+v", s.Key, p)
		}
	}
	auditContinuity(t, segs, 40*time.Millisecond)
	udp := waitSegments(t, st, "ffmpeg-udp", 2, 60*time.Second)
	for _, s := range udp {
		p := ffprobe(t, download(t, st, s.Key))
		if p.Video.Codec != "h264" || !p.Video.FirstKey || p.Audio != "aac" {
			t.Errorf("%s (udp): %+v", s.Key, p)
		}
	}
}
