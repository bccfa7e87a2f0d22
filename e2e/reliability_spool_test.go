package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// tinySpool mounts a tmpfs of size (e.g. "1m") for the spool: a disk that
// really fills up (ENOSPC). It needs root (CI runs as root).
func tinySpool(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs for the spool needs root")
	}
	dir := filepath.Join(t.TempDir(), "spool")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestSpoolDiskFull: storage goes away and the spool's disk (a 4 MiB
// tmpfs) fills up. The recorder says so (error log, dropped-frame and
// dropped-segment metrics), makes room by dropping its oldest spooled
// segments so the newest video keeps being written, and once storage is
// back the spool drains and recording goes on without a gap. Every stored
// segment is readable; the only gaps are segments dropped for room, each
// counted.
func TestSpoolDiskFull(t *testing.T) {
	t.Parallel()
	spool := tinySpool(t, "4m")
	m := testenv.MinIO(t)
	cams := startSynth(t, synth.CameraSpec{Path: "cam", Codec: "h264"})
	c := s3Config(t, m)
	c.Motion.Enabled = false
	c.Recording.SpoolDir = spool
	log, logs := testLogger(t)
	a := startAppMode(t, c, app.Mode{Name: "test", Recorder: true}, log)
	if err := a.RecordCamera(ingest.Camera{ID: "cam", URL: cams.URL("cam"), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	waitSegments(t, st, "cam", 2, 60*time.Second)
	m.Stop()
	stoppedAt := time.Now()
	testenv.WaitFor(t, 60*time.Second, "the spool disk full", func() bool {
		return strings.Contains(logs.String(), "no space left on device")
	})
	// Keep it full for a while: the recorder must keep making room.
	time.Sleep(10 * time.Second)
	met := scrapeMetrics(t, a.URL()+"/metrics")
	dropped := met[`vigia_segments_dropped_total{reason="disk_full"}`]
	if dropped == 0 {
		t.Errorf("no segment dropped for room on a full disk (metrics: %v)", met[`vigia_dropped_frames_total{reason="spool_write"}`])
	}
	m.Start()
	back := time.Now()
	testenv.WaitFor(t, 90*time.Second, "recording stored after the disk emptied", func() bool {
		n := 0
		for _, s := range segments(t, st, "cam") {
			if s.StartMs > back.UnixMilli() {
				n++
			}
		}
		return n >= 2
	})
	segs := segments(t, st, "cam")
	auditSegments(t, st, segs, "h264")
	// Segments recorded while the disk was full and storage away were
	// stored, except the dropped ones: the newest video was kept.
	kept := 0
	for _, s := range segs {
		if s.StartMs > stoppedAt.UnixMilli()+5000 && s.EndMs() < back.UnixMilli() {
			kept++
		}
	}
	if kept == 0 {
		t.Error("nothing recorded during the outage was kept")
	}
	// Gaps only inside the outage (the dropped segments, counted above).
	auditContinuity(t, segs, frameInterval, [2]int64{stoppedAt.UnixMilli(), back.UnixMilli()})
	if t.Failed() {
		for _, s := range segs {
			t.Logf("segment %+.1f s .. %+.1f s (outage %+.1f s .. %+.1f s)", float64(s.StartMs-stoppedAt.UnixMilli())/1000,
				float64(s.EndMs()-stoppedAt.UnixMilli())/1000, 0.0, back.Sub(stoppedAt).Seconds())
		}
	}
	met = scrapeMetrics(t, a.URL()+"/metrics")
	t.Logf("kept %d segments of the outage; dropped for room %v; frames not written %v", kept,
		met[`vigia_segments_dropped_total{reason="disk_full"}`], met[`vigia_dropped_frames_total{reason="spool_write"}`])
}
