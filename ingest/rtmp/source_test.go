package rtmp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

func startSynthRTMP(t *testing.T, specs ...synth.RTMPStreamSpec) *synth.RTMPServer {
	t.Helper()
	s := synth.NewRTMPServer(synth.RTMPServerConfig{Streams: specs})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestPullSynth(t *testing.T) {
	t.Parallel()
	srv := startSynthRTMP(t, synth.RTMPStreamSpec{Name: "cam", Codec: synth.CodecH265, Enhanced: true, Audio: true})
	col := &collector{}
	src := New(ingest.Camera{ID: "c", URL: srv.URL("cam"), Sound: true, Trusted: true}, ingest.SourceConfig{ReadTimeout: 3 * time.Second}, zap.NewNop())
	_, done := runSource(t, func(ctx context.Context) error { return src.Run(ctx, col) })
	testenv.WaitFor(t, 15*time.Second, "30 video units", func() bool { v, a := col.counts(); return v >= 30 && a > 0 })
	checkVideo(t, col, media.H265)
	srv.Drop("cam")
	select {
	case err := <-done:
		if err == nil {
			t.Error("Run returned nil after the connection dropped")
		}
		if _, ok := ingest.IsPermanent(err); ok {
			t.Errorf("dropped connection is permanent: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the connection dropped")
	}
}

func TestPullUnknownStream(t *testing.T) {
	t.Parallel()
	srv := startSynthRTMP(t)
	src := New(ingest.Camera{ID: "c", URL: srv.URL("nope"), Trusted: true}, ingest.SourceConfig{ReadTimeout: 3 * time.Second}, zap.NewNop())
	err := src.Run(context.Background(), &collector{})
	if pe, ok := ingest.IsPermanent(err); !ok || pe.Reason != ingest.ReasonNotFound {
		t.Errorf("unknown stream: %v, want permanent %q", err, ingest.ReasonNotFound)
	}
}

func TestPullPrivateAddressRefused(t *testing.T) {
	t.Parallel()
	srv := startSynthRTMP(t, synth.RTMPStreamSpec{Name: "cam"})
	src := New(ingest.Camera{ID: "c", URL: srv.URL("cam")}, ingest.SourceConfig{ReadTimeout: 3 * time.Second}, zap.NewNop())
	err := src.Run(context.Background(), &collector{})
	if pe, ok := ingest.IsPermanent(err); !ok || pe.Reason != ingest.ReasonForbidden {
		t.Errorf("loopback camera without trust: %v, want %q", err, ingest.ReasonForbidden)
	}
}

// TestPullFFmpegListen pulls from FFmpeg acting as an RTMP server.
func TestPullFFmpegListen(t *testing.T) {
	t.Parallel()
	clip := fixtureMP4(t)
	port := testenv.FreePort(t)
	url := fmt.Sprintf("rtmp://127.0.0.1:%d/live/stream", port)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-re", "-stream_loop", "-1", "-i", clip, "-c", "copy", "-f", "flv", "-listen", "1", url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	col := &collector{}
	var last error
	// FFmpeg listens a moment after it starts: retry the connection.
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		src := New(ingest.Camera{ID: "c", URL: url, Sound: true, Trusted: true}, ingest.SourceConfig{ReadTimeout: 3 * time.Second}, zap.NewNop())
		rctx, rcancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- src.Run(rctx, col) }()
		ok := false
		for !ok && time.Now().Before(deadline) {
			select {
			case last = <-done:
			case <-time.After(100 * time.Millisecond):
				v, a := col.counts()
				ok = v >= 30 && a > 0
				continue
			}
			break
		}
		rcancel()
		if ok {
			<-done
			checkVideo(t, col, media.H264)
			return
		}
		if errors.Is(last, context.Canceled) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no media pulled from ffmpeg: %v; ffmpeg: %s", last, stderr.String())
}
