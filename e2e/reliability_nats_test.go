package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// natsServer is an external NATS server (embedded in the test process) that
// a test stops and starts again on the same address and store.
type natsServer struct {
	t     *testing.T
	addr  string
	store string
	b     *bus.Bus
}

func startNATSServer(t *testing.T) *natsServer {
	n := &natsServer{t: t, addr: fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t)), store: t.TempDir()}
	n.start()
	t.Cleanup(func() {
		if n.b != nil {
			n.b.Close()
		}
	})
	return n
}

func (n *natsServer) start() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{Listen: n.addr, StoreDir: n.store}, zap.NewNop())
	if err != nil {
		n.t.Fatal(err)
	}
	n.b = b
}

func (n *natsServer) stop() {
	n.b.Close()
	n.b = nil
}

// TestNATSOutageStatic stops NATS while a node without the cluster records
// (static cameras): recording goes on without a gap, a camera going down and
// up during the outage is followed, and once NATS is back every stored
// segment has exactly one notice in the SEGMENTS stream (the outbox resends
// with Nats-Msg-Id, so retries never duplicate) and the status bucket holds
// each camera's current status. The outage lasts 20 s, a minute with
// VIGIA_LONG=1.
func TestNATSOutageStatic(t *testing.T) {
	t.Parallel()
	outage := 20 * time.Second
	if os.Getenv("VIGIA_LONG") == "1" {
		outage = time.Minute
	}
	m := testenv.SharedMinIO(t)
	cams := startSynth(t, synth.CameraSpec{Path: "cam", Codec: "h264", Audio: true}, synth.CameraSpec{Path: "flap", Codec: "h264"})
	ns := startNATSServer(t)
	c := s3Config(t, m)
	c.Motion.Enabled = false
	c.NATS.URL = "nats://" + ns.addr
	c.Ingest.BackoffMax = 2000000000
	log, _ := testLogger(t)
	a := startAppMode(t, c, app.Mode{Name: "test", Recorder: true}, log)
	for _, id := range []string{"cam", "flap"} {
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: cams.URL(id), Sound: true, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	st := openS3(t, c)
	waitSegments(t, st, "cam", 2, 60*time.Second)
	waitSegments(t, st, "flap", 2, 60*time.Second)

	ns.stop()
	stoppedAt := time.Now()
	// During the outage: flap goes down and comes back.
	if err := cams.SetDown("flap", true); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 15*time.Second, "flap OFFLINE", func() bool {
		s, _ := a.Recorder().Status("flap")
		return s.Code == status.Offline
	})
	if err := cams.SetDown("flap", false); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "flap ONLINE", func() bool {
		s, _ := a.Recorder().Status("flap")
		return s.Code == status.Online
	})
	time.Sleep(time.Until(stoppedAt.Add(outage)))
	ns.start()
	back := time.Now()

	// Recording went on: segments were stored during the outage.
	testenv.WaitFor(t, 60*time.Second, "a segment recorded after NATS returned", func() bool {
		for _, s := range segments(t, st, "cam") {
			if s.StartMs > back.UnixMilli() {
				return true
			}
		}
		return false
	})
	segs := segments(t, st, "cam")
	during := 0
	for _, s := range segs {
		if s.StartMs > stoppedAt.UnixMilli() && s.EndMs() < back.UnixMilli() {
			during++
		}
	}
	if want := int(outage/(2*time.Second)) - 2; during < want {
		t.Errorf("%d segments recorded during the %v outage, want at least %d", during, outage, want)
	}
	auditContinuity(t, segs, frameInterval)
	auditSegments(t, st, segs, "h264")

	// Every stored segment has exactly one notice.
	var stored map[string]int
	testenv.WaitFor(t, 30*time.Second, "a notice for every stored segment", func() bool {
		stored = map[string]int{}
		for _, id := range []string{"cam", "flap"} {
			for _, s := range segments(t, st, id) {
				stored[s.Key] = 0
			}
		}
		for _, n := range segmentNotices(t, ns.b) {
			if _, ok := stored[n.Key]; ok {
				stored[n.Key]++
			} else {
				stored[n.Key] = 100 // a notice without a segment
			}
		}
		for _, c := range stored {
			if c == 0 {
				return false
			}
		}
		return true
	})
	for k, c := range stored {
		if c != 1 {
			t.Errorf("%s: %d notices, want 1", k, c)
		}
	}
	// The status bucket holds the current status of both cameras.
	for _, id := range []string{"cam", "flap"} {
		testenv.WaitFor(t, 10*time.Second, id+" status in KV", func() bool {
			e, err := ns.b.KV(bus.BucketCameraStatus).Get(context.Background(), id)
			if err != nil {
				return false
			}
			var s status.Status
			return json.Unmarshal(e.Value(), &s) == nil && s.Code == status.Online && s.Since.After(stoppedAt.Add(-time.Minute))
		})
	}
	t.Logf("%d segments recorded during a %v NATS outage; %d notices, none duplicated", during, outage, len(stored))
}

// segmentNotices reads every notice kept in the SEGMENTS stream.
func segmentNotices(t *testing.T, b *bus.Bus) []bus.SegmentNotice {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := b.JetStream().Stream(ctx, bus.StreamSegments)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []bus.SegmentNotice
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		msg, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue
		}
		var n bus.SegmentNotice
		if err := json.Unmarshal(msg.Data, &n); err != nil {
			t.Fatalf("notice %d: %v", seq, err)
		}
		out = append(out, n)
	}
	return out
}
