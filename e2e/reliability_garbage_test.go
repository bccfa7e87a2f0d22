package e2e

import (
	"testing"
	"time"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// garbageFPS returns the frame rate at which the synthetic 720p H.264 clip's
// packet sizes add up to bitrate.
func garbageFPS(t *testing.T, bitrate float64) float64 {
	t.Helper()
	clip, err := synth.Fixture("h264", false)
	if err != nil {
		t.Fatal(err)
	}
	var bytes int
	for _, u := range clip.Units {
		for _, n := range u.NALUs {
			bytes += len(n)
		}
	}
	perFrame := float64(bytes) * 8 / float64(len(clip.Units))
	return bitrate / perFrame
}

// TestGarbageRTP: a camera sends random RTP payloads at 10 Mbit/s for 20 s
// (valid headers, random bytes). Nothing panics, the undecodable packets are
// counted, whatever segments the garbage camera stores are readable, and
// the two other cameras of the node record on without a gap. When the
// camera heals, it records again.
func TestGarbageRTP(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cam := startSynth(t,
		synth.CameraSpec{Path: "noise", Codec: "h264"},
		synth.CameraSpec{Path: "ok1", Codec: "h264"},
		synth.CameraSpec{Path: "ok2", Codec: "h265"},
	)
	c := s3Config(t, m)
	c.Ingest.ReadTimeout = config.Duration(10 * time.Second)
	c.Ingest.BackoffMax = config.Duration(2 * time.Second)
	log, _ := testLogger(t)
	a := startAppMode(t, c, app.Mode{Name: "test", Recorder: true}, log)
	for _, id := range []string{"noise", "ok1", "ok2"} {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: cam.URL(id), Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	st := openS3(t, c)
	for _, id := range []string{"noise", "ok1", "ok2"} {
		waitSegments(t, st, id, 2, 60*time.Second)
	}
	fps := garbageFPS(t, 10e6)
	framesBefore, _ := cam.FrameCount("noise")
	on := time.Now()
	if err := cam.SetFrameRate("noise", fps); err != nil {
		t.Fatal(err)
	}
	if err := cam.Garbage("noise", true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Second)
	if err := cam.Garbage("noise", false); err != nil {
		t.Fatal(err)
	}
	if err := cam.SetFrameRate("noise", 0); err != nil {
		t.Fatal(err)
	}
	off := time.Now()
	framesAfter, _ := cam.FrameCount("noise")
	sent := float64(framesAfter-framesBefore) / fps * 10e6 / off.Sub(on).Seconds()
	t.Logf("garbage sent at about %.1f Mbit/s for %v (%.0f frames/s of the clip's sizes)", sent/1e6, off.Sub(on).Round(time.Second), fps)

	testenv.WaitFor(t, 60*time.Second, "the garbage camera recording again", func() bool {
		for _, s := range segments(t, st, "noise") {
			if s.StartMs > off.UnixMilli() {
				return true
			}
		}
		return false
	})
	testenv.WaitFor(t, 30*time.Second, "status ONLINE", func() bool {
		s, _ := a.Recorder().Status("noise")
		return s.Code == status.Online
	})
	met := scrapeMetrics(t, a.URL()+"/metrics")
	if met["vigia_camera_panics_total"] != 0 {
		t.Errorf("%v panics recovered, want none", met["vigia_camera_panics_total"])
	}
	if met["vigia_decode_errors_total"] == 0 {
		t.Error("no decode errors counted for 20 s of garbage")
	}
	t.Logf("decode errors counted: %v; dropped frames: %v", met["vigia_decode_errors_total"], met[`vigia_dropped_frames_total{reason="no_keyframe"}`])

	// The other cameras: no gap at all, every segment readable.
	for _, tc := range []struct{ id, codec string }{{"ok1", "h264"}, {"ok2", "hevc"}} {
		segs := segments(t, st, tc.id)
		auditContinuity(t, segs, frameInterval)
		auditSegments(t, st, segs, tc.codec)
		if last := segs[len(segs)-1]; last.EndMs() < off.UnixMilli() {
			t.Errorf("%s: last segment ends at %d, before the garbage stopped", tc.id, last.EndMs())
		}
	}
	// The garbage camera: every stored segment is readable; the gap is the
	// garbage period (plus reconnection and a GOP), nothing before or after.
	segs := segments(t, st, "noise")
	auditSegments(t, st, segs, "h264")
	auditContinuity(t, segs, frameInterval, [2]int64{on.UnixMilli(), off.Add(8 * time.Second).UnixMilli()})
}
