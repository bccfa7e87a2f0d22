package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestStorageOutage stops MinIO for 30 s (a minute with VIGIA_LONG=1) while
// a camera records: nothing is lost, and the spooled segments reach storage
// in order once it is back.
func TestStorageOutage(t *testing.T) {
	t.Parallel()
	outage := 30 * time.Second
	if os.Getenv("VIGIA_LONG") == "1" {
		outage = time.Minute
	}
	m := testenv.MinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "cam", Codec: "h264"})
	c := s3Config(t, m)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "cam", URL: cam.URL("cam"), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	before := waitSegments(t, st, "cam", 2, 60*time.Second)
	m.Stop()
	stoppedAt := time.Now()
	time.Sleep(outage)
	m.Start()
	// Everything recorded during the outage arrives, plus two more.
	testenv.WaitFor(t, 90*time.Second, "segments recorded during and after the outage", func() bool {
		n := 0
		for _, s := range segments(t, st, "cam") {
			if s.StartMs > stoppedAt.Add(outage).UnixMilli() {
				n++
			}
		}
		return n >= 2
	})
	segs := segments(t, st, "cam")
	if segs[0].Key != before[0].Key {
		t.Errorf("first segment changed: %s then %s", before[0].Key, segs[0].Key)
	}
	auditContinuity(t, segs, frameInterval)

	// Upload order, from the segment notices on NATS.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cons, err := a.Bus().JetStream().OrderedConsumer(ctx, bus.StreamSegments, jetstream.OrderedConsumerConfig{FilterSubjects: []string{bus.SegmentSubject("cam")}})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	got := 0
	for got < len(segs)-1 {
		msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatalf("after %d notices: %v", got, err)
		}
		var n bus.SegmentNotice
		if err := json.Unmarshal(msg.Data(), &n); err != nil {
			t.Fatal(err)
		}
		if n.StartMs <= last {
			t.Errorf("segment %s stored after a later one", n.Key)
		}
		last = n.StartMs
		got++
	}
}

// buildVigia builds the vigia binary once per test run.
func buildVigia(t *testing.T) string { return testenv.VigiaBinary(t) }

// TestRecorderKilled kills a recorder process with SIGKILL in the middle of
// a segment and restarts it: the partial segment is recovered from the spool
// and stored, losing at most the fragment in flight.
func TestRecorderKilled(t *testing.T) {
	t.Parallel()
	bin := buildVigia(t)
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "cam", Codec: "h264"})
	c := s3Config(t, m)
	cfgFile := filepath.Join(t.TempDir(), "vigia.yaml")
	yaml := fmt.Sprintf(`data_dir: %s
http: {addr: "127.0.0.1:0"}
nats: {listen: "127.0.0.1:0"}
rtmp: {addr: "127.0.0.1:0"}
security: {secret: %q}
storage: {backend: s3, endpoint: %q, bucket: %q, access_key: %q, secret_key: %q}
recording: {segment_duration: 6s, fragment_duration: 1s}
cameras:
  - {id: "cam-7", url: %q, history_days: 7}
`, c.DataDir, clusterSecret, c.Storage.Endpoint, c.Storage.Bucket, c.Storage.AccessKey, c.Storage.SecretKey, cam.URL("cam"))
	if err := os.WriteFile(cfgFile, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "recorder", "--config", cfgFile)
		out := &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			_, _ = cmd.Process.Wait()
			if t.Failed() {
				t.Logf("recorder output:\n%s", out.String())
			}
		})
		return cmd
	}
	st := openS3(t, c)
	proc := start()
	first := waitSegments(t, st, "cam-7", 2, 60*time.Second)
	// Kill 3.5 s into the segment after the last stored one: three whole
	// fragments are on disk, the fourth is in flight.
	openStart := time.UnixMilli(first[len(first)-1].EndMs())
	time.Sleep(time.Until(openStart.Add(3500 * time.Millisecond)))
	if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = proc.Process.Wait()
	killedAt := time.Now()
	if n := len(segments(t, st, "cam-7")); n != len(first) {
		// The open segment was not finished before the kill.
		t.Logf("%d segments before restart (%d before the kill)", n, len(first))
	}
	start()
	testenv.WaitFor(t, 60*time.Second, "the recovered segment and a new one", func() bool {
		n := 0
		for _, s := range segments(t, st, "cam-7") {
			if s.StartMs > killedAt.UnixMilli() {
				n++
			}
		}
		return n >= 1
	})
	segs := segments(t, st, "cam-7")
	var recovered *stored
	for i := range segs {
		if segs[i].StartMs == openStart.UnixMilli() {
			recovered = &segs[i]
		}
	}
	if recovered == nil {
		t.Fatalf("no segment starting at %d (the one open at the kill) in %v", openStart.UnixMilli(), segs)
	}
	obj, err := st.Stat(context.Background(), recovered.Key)
	if err != nil {
		t.Fatal(err)
	}
	if obj.Metadata["recovered"] != "1" {
		t.Errorf("%s not marked recovered: %v", recovered.Key, obj.Metadata)
	}
	// Loss at most the fragment in flight: the recovered segment reaches
	// to within one fragment (plus a frame) of the kill.
	lost := killedAt.Sub(time.UnixMilli(recovered.EndMs()))
	if lost > time.Second+frameInterval+500*time.Millisecond {
		t.Errorf("recovered segment ends %v before the kill, more than one fragment", lost)
	}
	p := ffprobe(t, download(t, st, recovered.Key))
	if p.Video.Codec != "h264" || !p.Video.FirstKey || p.Video.Frames == 0 {
		t.Errorf("recovered segment: %+v", p)
	}
	auditContinuity(t, segs, frameInterval, [2]int64{recovered.EndMs(), time.Now().UnixMilli()})
}
