package e2e

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// startAppMode starts an in-process app with mode.
func startAppMode(t *testing.T, c *config.Config, mode app.Mode, log *zap.Logger) *app.App {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	withMetricsToken(c)
	a, err := app.New(ctx, c, mode, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

// TestTimestampFaults records cameras whose clocks misbehave: one jumps
// back an hour, one jumps forward a day (with audio), one declares 15 fps
// and sends 12.6 (the ratio of 25 declared to 21 sent). Every segment is
// read by ffprobe; there is no gap and no overlap anywhere (the jumps are
// absorbed, not papered over with a phantom gap), and the stored timeline
// runs with wall time within 1 %.
//
// Not parallel: it holds each segment's end to the wall-clock time the
// segment was finished, which a machine busy with other tests' cameras
// delays.
func TestTimestampFaults(t *testing.T) {
	m := testenv.SharedMinIO(t)
	cam := startSynth(t,
		synth.CameraSpec{Path: "back", Codec: "h264"},
		synth.CameraSpec{Path: "day", Codec: "h264", Audio: true},
		synth.CameraSpec{Path: "slow", Codec: "h264"},
	)
	if err := cam.SetFrameRate("slow", 15*21.0/25); err != nil {
		t.Fatal(err)
	}
	c := s3Config(t, m)
	c.Motion.Enabled = false
	log, logs := testLogger(t)
	fin := newFinished()
	a := startAppMode(t, c, app.Mode{Name: "test", Recorder: true, OnSegmentStored: fin.hook}, log)
	for _, id := range []string{"back", "day", "slow"} {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: cam.URL(id), Sound: true, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	st := openS3(t, c)
	started := time.Now()
	waitSegments(t, st, "back", 3, 60*time.Second)
	waitSegments(t, st, "day", 3, 60*time.Second)
	jumpedAt := time.Now()
	if err := cam.JumpTimestamps("back", -time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := cam.JumpTimestamps("day", 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	// Ten seconds more, then a second jump back on "back".
	time.Sleep(10 * time.Second)
	if err := cam.JumpTimestamps("back", -90*time.Second); err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(10 * time.Second)
	if until := started.Add(45 * time.Second); until.After(end) {
		end = until
	}
	testenv.WaitFor(t, time.Until(end)+60*time.Second, "segments after the faults", func() bool {
		for _, id := range []string{"back", "day", "slow"} {
			n := 0
			for _, s := range segments(t, st, id) {
				if s.StartMs > end.UnixMilli() {
					n++
				}
			}
			if n < 1 {
				return false
			}
		}
		return true
	})
	for _, id := range []string{"back", "day", "slow"} {
		segs := segments(t, st, id)
		auditContinuity(t, segs, frameInterval)
		auditSegments(t, st, segs, "h264")
		from := jumpedAt.Add(-6 * time.Second)
		if id == "slow" && len(segs) > 0 {
			// The rate is measured over the first 10 s of the connection
			// and the offset built up meanwhile absorbed over the next
			// 10 s: from 22 s after the first frame (the start of the first
			// segment), not after the test asked for the camera, which
			// under load connects seconds later.
			from = time.UnixMilli(segs[0].StartMs).Add(22 * time.Second)
		}
		auditWallTime(t, fin, id, segs, from, time.Second)
	}
	if n := countLines(logs.String(), "timestamp discontinuity"); n != 0 {
		t.Errorf("%d timestamp discontinuities logged, want the jumps absorbed", n)
	}
}

func countLines(s, sub string) int {
	n := 0
	for i := 0; ; {
		j := indexFrom(s, sub, i)
		if j < 0 {
			return n
		}
		n++
		i = j + len(sub)
	}
}

func indexFrom(s, sub string, i int) int {
	if i >= len(s) {
		return -1
	}
	for k := i; k+len(sub) <= len(s); k++ {
		if s[k:k+len(sub)] == sub {
			return k
		}
	}
	return -1
}
