package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/bench"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestWebRTCViewersKeepRecording: five WebRTC viewers (pion, the bench's)
// watch a camera while it is recorded. Each receives the camera's frames
// at its rate, and the recording loses no frame: every segment written
// while they watched passes the recording audit (no frame missing, no
// gap), and the recorder dropped nothing.
func TestWebRTCViewersKeepRecording(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "cam", Codec: "h264", Audio: true})
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "cam", URL: cam.URL("cam"), Sound: true, Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	first := waitSegments(t, st, "cam", 1, 30*time.Second)

	const viewers, window = 5, 7 * time.Second
	urls := make([]string, viewers)
	for i := range urls {
		urls[i] = a.WHEPURL("cam", time.Now().Add(time.Hour))
	}
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := bench.RunWHEPViewers(t.Context(), urls, window, true, pw)
		pw.CloseWithError(err)
		errc <- err
	}()
	lines := bufio.NewScanner(pr)
	var rep bench.ViewersReport
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "{") {
			if err := json.Unmarshal(lines.Bytes(), &rep); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := <-errc; err != nil {
		t.Fatalf("viewers: %v", err)
	}
	if rep.Connected != viewers {
		t.Fatalf("%d of %d viewers connected", rep.Connected, viewers)
	}
	for i, f := range rep.Frames {
		// 15 frames a second; a viewer may start up to a GOP late.
		if f < int64(window.Seconds()*15*0.7) {
			t.Errorf("viewer %d received %d frames in %v", i, f, window)
		}
	}
	t.Logf("%d viewers: frames %v, %d packets lost", viewers, rep.Frames, rep.LostPackets)

	segs := waitSegments(t, st, "cam", len(first)+4, 30*time.Second)
	auditRecording(t, st, segs, wantSegments{Codec: "h264", Width: 1280, Height: 720, Audio: "aac", FrameInterval: frameInterval})
	mt := scrapeMetrics(t, a.URL()+"/metrics")
	for _, r := range []string{"queue_full", "no_keyframe", "no_params", "spool_write"} {
		if v := mt[`vigia_dropped_frames_total{reason="`+r+`"}`]; v != 0 {
			t.Errorf("recorder dropped %v frames (%s) while the viewers watched", v, r)
		}
	}
	if got := mt["vigia_live_webrtc_dropped_frames_total"]; got != 0 {
		t.Logf("viewer queues dropped %v frames", got)
	}
	checkSealedByNode(t, a.URL())
}

// TestWebRTCGStreamerViewer: GStreamer's webrtcbin, a WebRTC stack not
// written here (libnice for ICE), receives a camera from the node by WHEP
// (testdata/gst_whep_client.py) and decodes 30 pictures of its size,
// sealed by the node with AES_CM_128_HMAC_SHA1_80, webrtcbin's profile.
func TestWebRTCGStreamerViewer(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "cam", Codec: "h264", Small: true})
	c := s3Config(t, m)
	log, logs := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "cam", URL: cam.URL("cam"), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	whep := a.WHEPURL("cam", time.Now().Add(time.Hour))
	var out []byte
	testenv.WaitFor(t, 40*time.Second, "GStreamer to decode the WebRTC stream", func() bool {
		cmd := exec.Command(gstPython(), "testdata/gst_whep_client.py", whep, "30")
		cmd.Env = append(os.Environ(), "GST_DEBUG="+os.Getenv("VIGIA_GST_DEBUG"))
		var err error
		out, err = cmd.CombinedOutput()
		if err != nil {
			t.Logf("gst_whep_client: %v: %s", err, out)
			return false
		}
		return true
	})
	if !strings.Contains(string(out), "decoded 30 640x360") {
		t.Fatalf("gst_whep_client: %s", out)
	}
	t.Logf("GStreamer webrtcbin: %s", strings.TrimSpace(string(out)))
	checkSealedByNode(t, a.URL())
	if !strings.Contains(logs.String(), `"srtp":"SRTP_AES128_CM_HMAC_SHA1_80","sealed_by_node":true`) {
		t.Error("no session with webrtcbin logged as sealed by the node with AES_CM_128_HMAC_SHA1_80")
	}
}
