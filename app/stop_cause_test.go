//go:build cgo

package app

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// A camera the cluster stops records why, as the cluster decided it: a
// blocked camera's gap record says camera_blocked, a removed camera's
// camera_removed.
func TestClusterStopCauses(t *testing.T) {
	srv := synth.NewServer(synth.Config{Addr: "127.0.0.1:0", Cameras: []synth.CameraSpec{{Path: "cam1", Codec: synth.CodecH264}}})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c := config.Default()
	c.DataDir = t.TempDir()
	c.NodeID = "node-test"
	c.HTTP.Addr = "127.0.0.1:0"
	c.NATS.Listen = "127.0.0.1:0"
	c.RTMP.Addr = "127.0.0.1:0"
	c.Recording.SegmentDuration = config.Duration(2 * time.Second)
	c.Ingest.AllowPrivateNetworks = true
	c.Cameras = []config.Camera{{ID: "cam1", URL: srv.URL("cam1"), HistoryDays: 3}}
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	a, err := New(ctx, c, Mode{Name: "test", Recorder: true, Cluster: true}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)

	var mu sync.Mutex
	var causes []status.Cause
	sub, err := a.Bus().Conn().Subscribe(bus.SubjectGapsPrefix+"cam1", func(m *nats.Msg) {
		var g status.Gap
		if json.Unmarshal(m.Data, &g) == nil {
			mu.Lock()
			causes = append(causes, g.Cause)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	// next waits for the first record published from now on, and says
	// whether its cause is want.
	next := func(want status.Cause) {
		t.Helper()
		mu.Lock()
		from := len(causes)
		mu.Unlock()
		var got status.Cause
		testenv.WaitFor(t, 30*time.Second, "a gap record", func() bool {
			mu.Lock()
			defer mu.Unlock()
			if len(causes) > from {
				got = causes[from]
				return true
			}
			return false
		})
		if got != want {
			t.Errorf("gap record of cause %s, want %s", got, want)
		}
	}
	recording := func() bool {
		st, ok := a.Recorder().Status("cam1")
		return ok && st.Code == status.Online
	}

	testenv.WaitFor(t, 30*time.Second, "the camera recording", recording)
	rec, ok, err := a.Bus().GetCamera(ctx, "cam1")
	if err != nil || !ok {
		t.Fatalf("registry record: %v %v", ok, err)
	}
	rec.Blocked = true
	mu.Lock()
	causes = nil
	mu.Unlock()
	if err := a.Bus().PutCamera(ctx, rec); err != nil {
		t.Fatal(err)
	}
	next(status.CauseCameraBlocked)

	rec.Blocked = false
	if err := a.Bus().PutCamera(ctx, rec); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 30*time.Second, "the camera recording again", recording)
	// The restart records its own gap (from the stop) with its first
	// segment.
	testenv.WaitFor(t, 30*time.Second, "the restart's record", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(causes) >= 2
	})
	if err := a.Bus().DeleteCamera(ctx, "cam1"); err != nil {
		t.Fatal(err)
	}
	next(status.CauseCameraRemoved)
}
