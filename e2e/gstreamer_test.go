package e2e

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/testenv"
)

// gstRTSPServer starts testdata/gst_rtsp_server.py (GStreamer's
// gst-rtsp-server) serving the synthetic cameras' fixture clips in a loop
// on 127.0.0.1, and returns its base URL. The server stops at the end of
// the test.
func gstRTSPServer(t *testing.T) string {
	t.Helper()
	stdout, stderr := startGstScript(t, "gst_rtsp_server.py",
		"../synth/fixtures/h264_720p.h264", "../synth/fixtures/h265_720p.h265", "../synth/fixtures/aac_16k_mono.aac")
	ports := make(chan int, 1)
	go func() {
		defer close(ports)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var port int
			if _, err := fmt.Sscanf(sc.Text(), "port %d", &port); err == nil {
				ports <- port
				break
			}
		}
		// Keep reading so the server never blocks on a full pipe.
		for sc.Scan() {
		}
	}()
	select {
	case port, ok := <-ports:
		if !ok {
			t.Fatalf("gst_rtsp_server.py exited before listening (run make deps for python3-gi and GStreamer):\n%s", stderr.String())
		}
		return fmt.Sprintf("rtsp://127.0.0.1:%d", port)
	case <-time.After(30 * time.Second):
		t.Fatalf("gst_rtsp_server.py did not report its port in 30 s:\n%s", stderr.String())
	}
	return ""
}

// TestGStreamerRTSPServer records from GStreamer's RTSP server
// (gst-rtsp-server), an implementation other than the gortsplib one behind
// the synthetic cameras: H.264, H.265 and H.264 with AAC, each over TCP and
// over UDP, and checks every stored segment like
// TestRecordsH264AndH265IntoMinIO does.
func TestGStreamerRTSPServer(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("ffprobe"); err != nil {
		t.Fatal("ffprobe not found: run make deps")
	}
	m := testenv.SharedMinIO(t)
	base := gstRTSPServer(t)
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)

	type camera struct {
		id, path, transport string
		want                wantSegments
	}
	h264 := wantSegments{Codec: "h264", Width: 1280, Height: 720, FrameInterval: frameInterval}
	h265 := wantSegments{Codec: "hevc", Width: 1280, Height: 720, FrameInterval: frameInterval}
	h264AAC := h264
	h264AAC.Audio = "aac"
	var cams []camera
	for _, tr := range []string{"tcp", "udp"} {
		cams = append(cams,
			camera{"gst-h264-" + tr, "h264", tr, h264},
			camera{"gst-h265-" + tr, "h265", tr, h265},
			camera{"gst-h264-aac-" + tr, "h264-aac", tr, h264AAC},
		)
	}
	for _, cam := range cams {
		if err := a.RecordCamera(ingest.Camera{ID: cam.id, URL: base + "/" + cam.path, Transport: cam.transport, Sound: true, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, cam := range cams {
				s, _ := a.Recorder().Status(cam.id)
				t.Logf("camera %s status: %+v", cam.id, s)
			}
		}
	})
	st := openS3(t, c)
	for _, cam := range cams {
		t.Run(strings.TrimPrefix(cam.id, "gst-"), func(t *testing.T) {
			// The first three segments: cameras audited later have recorded
			// more by then.
			segs := waitSegments(t, st, cam.id, 3, 60*time.Second)
			auditRecording(t, st, segs[:3], cam.want)
		})
	}
}
