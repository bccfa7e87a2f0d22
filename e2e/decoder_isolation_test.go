package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/thumbs"
	"github.com/vigia/vigia/thumbs/decodeproc"
)

// TestDecoderIsolation: a recorder records two cameras, making a
// thumbnail of each every 2 s in its decoder processes (the real vigia
// binary's `decode`, with test operations on). One process aborts during
// a request, every process is killed with SIGKILL while thumbnails are
// made, one hangs past its request's deadline and one allocates past its
// memory limit. Each time only the requests in those processes fail; the
// processes are killed, counted by reason and replaced; the cameras record
// on without a gap, every segment readable; thumbnails and a snapshot are
// made again after.
func TestDecoderIsolation(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cams := startSynth(t, synth.CameraSpec{Path: "a", Codec: "h264"}, synth.CameraSpec{Path: "b", Codec: "h265"})
	c := s3Config(t, m)
	c.Thumbs.Minute = config.Duration(2 * time.Second)
	log, _ := testLogger(t)
	a := startAppMode(t, c, app.Mode{Name: "test", Recorder: true,
		DecoderCommand: []string{testenv.VigiaBinary(t), decodeproc.Subcommand, "--test-ops"}}, log)
	for _, id := range []string{"a", "b"} {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: cams.URL(id), Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	st := openS3(t, c)
	for _, id := range []string{"a", "b"} {
		waitSegments(t, st, id, 2, 60*time.Second)
	}
	thumbnails := func() float64 {
		return scrapeMetrics(t, a.URL()+"/metrics")[`vigia_thumbnail_images_total{kind="minute"}`]
	}
	testenv.WaitFor(t, 30*time.Second, "thumbnails", func() bool { return thumbnails() >= 4 })
	pool := a.Decoders()
	restarts := func(reason string) float64 {
		return scrapeMetrics(t, a.URL()+"/metrics")[fmt.Sprintf(`vigia_decoder_restarts_total{reason=%q}`, reason)]
	}
	faultsFrom := time.Now()
	ctx := context.Background()

	// A process aborts during a request.
	if _, err := pool.Test(ctx, decodeproc.TestCrash, 0); !errors.Is(err, decodeproc.ErrProcess) {
		t.Fatalf("crash: %v, want ErrProcess", err)
	}
	// Every process killed while thumbnails are made: a request in one
	// fails, a process found dead before its next request is replaced.
	testenv.WaitFor(t, 30*time.Second, "a decoder process", func() bool { return pool.Stats().Processes > 0 })
	var killed []int
	kill := func() {
		for _, pid := range pool.Stats().PIDs {
			if slices.Contains(killed, pid) {
				continue
			}
			// A process that exited meanwhile is gone already: ESRCH.
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				t.Fatal(err)
			}
			killed = append(killed, pid)
		}
	}
	kill()
	testenv.WaitFor(t, 45*time.Second, "a killed process replaced by the next thumbnails", func() bool {
		// The crash, then a killed process: as a crash when it had a
		// request, as exited when found dead before one, as a protocol
		// failure or a cancelled request when it died mid-message. The
		// pool hands requests to the most recently used process: one
		// killed while another was used is found dead at its next
		// request, or stopped when idle past the pool's idle timeout
		// (30 s), so only the one the thumbnails use next is sure to be
		// counted here.
		//
		// A process started after the kill (the crashed one's replacement,
		// when the thumbnails asked for it meanwhile) may be the one used
		// next, leaving the killed ones idle: it is killed too.
		if restarts(decodeproc.ReasonCrash)+restarts(decodeproc.ReasonExited)+
			restarts(decodeproc.ReasonProtocol)+restarts(decodeproc.ReasonCanceled) >= 2 {
			return true
		}
		kill()
		return false
	})
	// A process hangs past the request's deadline.
	hangCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_, err := pool.Test(hangCtx, decodeproc.TestHang, 0)
	cancel()
	if !errors.Is(err, decodeproc.ErrProcess) {
		t.Fatalf("hang: %v, want ErrProcess", err)
	}
	// A process allocates past its memory limit.
	if _, err := pool.Test(ctx, decodeproc.TestAlloc, 4<<30); !errors.Is(err, decodeproc.ErrProcess) {
		t.Fatalf("4 GiB: %v, want ErrProcess", err)
	}
	faultsTo := time.Now()

	if restarts(decodeproc.ReasonTimeout) != 1 || restarts(decodeproc.ReasonMemory) != 1 {
		t.Fatalf("restarts: timeout %v, memory %v; want 1 each", restarts(decodeproc.ReasonTimeout), restarts(decodeproc.ReasonMemory))
	}
	replaced := 0
	for _, pid := range killed {
		if !slices.Contains(pool.Stats().PIDs, pid) {
			replaced++
		}
	}
	if replaced == 0 {
		t.Fatalf("every killed process (%v) still in the pool", killed)
	}

	// Imaging works again: new thumbnails, a snapshot over NATS.
	before := thumbnails()
	testenv.WaitFor(t, 30*time.Second, "new thumbnails", func() bool { return thumbnails() >= before+2 })
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	data, err := a.Bus().RequestSnapshot(sctx, "b")
	cancel()
	var snap thumbs.SnapshotReply
	if err != nil || json.Unmarshal(data, &snap) != nil || snap.Error != "" || snap.Width != 1280 {
		t.Fatalf("snapshot after the faults: %s %v", data, err)
	}

	// Recording never stopped: segments after the faults, no gap, all
	// readable.
	for _, id := range []string{"a", "b"} {
		testenv.WaitFor(t, 60*time.Second, "segments of "+id+" after the faults", func() bool {
			segs := segments(t, st, id)
			return len(segs) > 0 && segs[len(segs)-1].StartMs > faultsTo.Add(2*time.Second).UnixMilli()
		})
	}
	met := scrapeMetrics(t, a.URL()+"/metrics")
	if met["vigia_camera_panics_total"] != 0 || met["vigia_camera_reconnects_total"] != 0 {
		t.Errorf("panics %v, reconnects %v: the cameras were disturbed", met["vigia_camera_panics_total"], met["vigia_camera_reconnects_total"])
	}
	for _, tc := range []struct{ id, codec string }{{"a", "h264"}, {"b", "hevc"}} {
		segs := segments(t, st, tc.id)
		auditContinuity(t, segs, frameInterval)
		auditSegments(t, st, segs, tc.codec)
		if segs[0].StartMs > faultsFrom.UnixMilli() {
			t.Errorf("%s: recording starts after the faults began", tc.id)
		}
	}
	t.Logf("faults over %v; restarts: crash %v, exited %v, timeout %v, memory %v", faultsTo.Sub(faultsFrom).Round(time.Millisecond),
		restarts(decodeproc.ReasonCrash), restarts(decodeproc.ReasonExited), restarts(decodeproc.ReasonTimeout), restarts(decodeproc.ReasonMemory))
}
