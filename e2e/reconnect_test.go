package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/testenv"
)

// gstGOP is the keyframe interval of the clips GStreamer's RTSP server
// plays (synth/fixtures).
const gstGOP = 2 * time.Second

// gstCamera is GStreamer's RTSP server on a fixed port of 127.0.0.1, a
// camera that can be killed and started again where it was.
type gstCamera struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
	err  *lockedBuffer
}

// start starts the server and returns once it listens.
func (g *gstCamera) start() {
	g.t.Helper()
	cmd := exec.Command(gstPython(), "testdata/gst_rtsp_server.py",
		"../synth/fixtures/h264_720p.h264", "../synth/fixtures/h265_720p.h265", "../synth/fixtures/aac_16k_mono.aac")
	cmd.Env = append(os.Environ(), "GST_DEBUG=2", "GST_DEBUG_NO_COLOR=1", "GST_RTSP_PORT="+strconv.Itoa(g.port))
	g.err = &lockedBuffer{}
	cmd.Stderr = g.err
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		g.t.Fatal(err)
	}
	// The server stops when its standard input closes, even if the test
	// process dies without killing it.
	if _, err := cmd.StdinPipe(); err != nil {
		g.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		g.t.Fatal(err)
	}
	g.cmd = cmd
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == fmt.Sprintf("port %d", g.port) {
				listening <- true
				break
			}
		}
		close(listening)
		for sc.Scan() {
		}
	}()
	select {
	case ok := <-listening:
		if !ok {
			g.t.Fatalf("gst_rtsp_server.py exited before listening on %d:\n%s", g.port, g.err.String())
		}
	case <-time.After(30 * time.Second):
		g.t.Fatalf("gst_rtsp_server.py not listening on %d in 30 s:\n%s", g.port, g.err.String())
	}
}

// kill kills the server with SIGKILL, as a camera that loses power.
func (g *gstCamera) kill() {
	_ = g.cmd.Process.Kill()
	_ = g.cmd.Wait()
}

// TestCameraKilledReconnects: a GStreamer RTSP camera killed for 20 s is
// recorded again as soon as it answers: the hole in the stored segments is
// at most the outage plus 3 s plus one GOP.
func TestCameraKilledReconnects(t *testing.T) {
	t.Parallel()
	cameraKilled(t, 20*time.Second)
}

// TestCameraKilledLongReconnects is TestCameraKilledReconnects with an
// outage of 3 minutes, past the fast retries: the camera is found by its
// probe. It runs with VIGIA_LONG=1 (make soak).
func TestCameraKilledLongReconnects(t *testing.T) {
	if os.Getenv("VIGIA_LONG") == "" {
		t.Skip("set VIGIA_LONG=1 (make soak)")
	}
	t.Parallel()
	cameraKilled(t, 3*time.Minute)
}

func cameraKilled(t *testing.T, outage time.Duration) {
	if _, err := exec.LookPath(gstPython()); err != nil {
		t.Fatal("python3 not found: run make deps")
	}
	m := testenv.SharedMinIO(t)
	cam := &gstCamera{t: t, port: testenv.FreePort(t)}
	cam.start()
	t.Cleanup(cam.kill)
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "gst-cam", URL: fmt.Sprintf("rtsp://127.0.0.1:%d/h264", cam.port), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	waitSegments(t, st, "gst-cam", 2, 60*time.Second)

	downAt := time.Now()
	cam.kill()
	testenv.WaitFor(t, 15*time.Second, "status OFFLINE", func() bool {
		s, _ := a.Recorder().Status("gst-cam")
		return s.Code == status.Offline
	})
	// The outage itself: the camera stays dead this long.
	time.Sleep(outage - time.Since(downAt))
	cam.start()
	upAt := time.Now()
	testenv.WaitFor(t, 60*time.Second, "two segments after the outage", func() bool {
		n := 0
		for _, s := range segments(t, st, "gst-cam") {
			if s.StartMs > upAt.UnixMilli() {
				n++
			}
		}
		return n >= 2
	})
	segs := segments(t, st, "gst-cam")
	var gaps []int64
	for i := 1; i < len(segs); i++ {
		if g := segs[i].StartMs - segs[i-1].EndMs(); g > int64(frameInterval/time.Millisecond) {
			gaps = append(gaps, g)
		}
	}
	down := upAt.Sub(downAt)
	limit := down + 3*time.Second + gstGOP
	if len(gaps) != 1 {
		t.Fatalf("gaps %v ms, want one", gaps)
	}
	gap := time.Duration(gaps[0]) * time.Millisecond
	t.Logf("camera dead %v: hole of %v in the stored segments (limit %v)", down.Round(time.Millisecond), gap, limit)
	if gap > limit {
		t.Errorf("hole of %v after an outage of %v, want at most %v (outage + 3 s + one GOP)", gap, down, limit)
	}
	if hs := holes(segs); len(hs) == 1 {
		wantClosedGap(t, st, "gst-cam", status.CauseCameraOffline, hs[0])
	}
}
