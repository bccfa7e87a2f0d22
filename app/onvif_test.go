package app

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/onvif/onviftest"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

func onvifCamera(t *testing.T, vendor string) *onviftest.Camera {
	t.Helper()
	v, _ := onviftest.VendorByName(vendor)
	cam, err := onviftest.Start(onviftest.Options{Vendor: v, User: "admin", Password: "pw", ClockOffset: -3 * time.Hour, MaxPullWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cam.Close)
	return cam
}

// TestONVIFResolve: an onvif:// source URL becomes the camera's RTSP URL
// of the stream asked, with the credentials; the dial guard applies.
func TestONVIFResolve(t *testing.T) {
	cam := onvifCamera(t, "hikvision")
	host := strings.TrimPrefix(cam.Base, "http://")
	a := &App{cfg: config.Default(), log: zap.NewNop()}
	a.onvif = newONVIF(a)
	for stream, want := range map[string]string{
		"0": "rtsp://admin:pw@127.0.0.1:554/Streaming/Channels/101?transportmode=unicast&profile=Profile_1",
		"1": "rtsp://admin:pw@127.0.0.1:554/Streaming/Channels/102?transportmode=unicast&profile=Profile_2",
	} {
		got, err := a.onvif.resolve(camera.Config{ID: "c" + stream, Trusted: true}, "onvif://admin:pw@"+host+"?stream="+stream)
		if err != nil || got != want {
			t.Fatalf("stream %s: %q, %v; want %q", stream, got, err, want)
		}
	}
	if _, err := a.onvif.resolve(camera.Config{ID: "c9", Trusted: true}, "onvif://admin:bad@"+host); !permanent(err) {
		t.Fatalf("wrong password: %v, want a permanent error", err)
	}
	if _, err := a.onvif.resolve(camera.Config{ID: "c8"}, "onvif://admin:pw@"+host); err == nil {
		t.Fatal("a loopback camera resolved without private networks allowed")
	}
	if got, err := a.onvif.resolve(camera.Config{ID: "c7"}, "rtsp://u:p@203.0.113.7/x"); err != nil || got != "rtsp://u:p@203.0.113.7/x" {
		t.Fatalf("rtsp url changed: %q, %v", got, err)
	}
	a.onvif.mu.Lock()
	defer a.onvif.mu.Unlock()
	if d := a.onvif.cams["c7"]; !d.tryOnce || d.url != "http://203.0.113.7:80/onvif/device_service" {
		t.Fatalf("rtsp camera with credentials: device %+v, want one tried once on port 80", d)
	}
	if _, ok := a.onvif.cams["c8"]; ok {
		t.Fatal("a camera that did not resolve has a device")
	}
}

// TestONVIFEvents: the consumer of a camera with a device subscribes, and
// the camera's motion and digital input come out once each on
// vigia.events.{camera}.{type} with their end; closing it unsubscribes.
func TestONVIFEvents(t *testing.T) {
	cam := onvifCamera(t, "hikvision")
	host := strings.TrimPrefix(cam.Base, "http://")
	a := thumbsApp(t)
	a.cfg.NodeID = "rec-1"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{Listen: "127.0.0.1:0"}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	a.bus = b
	a.outbox = bus.NewOutbox(b, 0, zap.NewNop())
	defer a.outbox.Close()
	a.onvif = newONVIF(a)
	if _, err := a.onvif.resolve(camera.Config{ID: "cam-3", Trusted: true}, "onvif://admin:pw@"+host); err != nil {
		t.Fatal(err)
	}
	if a.onvif.consumer()("cam-4") != nil {
		t.Fatal("a camera without a device got a consumer")
	}
	c := a.onvif.consumer()("cam-3")
	if c == nil {
		t.Fatal("no consumer")
	}
	testenv.WaitFor(t, 20*time.Second, "the subscription", func() bool { return cam.Subscriptions() == 1 && cam.Calls("PullMessages") > 0 })

	nc, err := nats.Connect(b.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var mu sync.Mutex
	var got []onvifMessage
	sub, err := nc.Subscribe("vigia.events.cam-3.*", func(m *nats.Msg) {
		var e onvifMessage
		if json.Unmarshal(m.Data, &e) == nil {
			mu.Lock()
			got = append(got, e)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	_ = nc.Flush()
	for _, k := range []string{"motion", "input"} {
		if err := cam.Set(k, true); err != nil {
			t.Fatal(err)
		}
		if err := cam.Set(k, false); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, 20*time.Second, "two events", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= 2 })
	c.Close()
	if n := cam.Subscriptions(); n != 0 {
		t.Fatalf("%d subscriptions after Close", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].Type != 5 || got[1].Type != 2 || got[0].Kind != "motion" || got[1].Kind != "digital input" {
		t.Fatalf("events %+v, want motion (5) then digital input (2)", got)
	}
	for _, e := range got {
		if e.Camera != "cam-3" || e.Source != "onvif" || e.Node != "rec-1" || e.EndMs < e.AtMs || time.Since(time.UnixMilli(e.AtMs)).Abs() > time.Minute || !strings.HasPrefix(e.ID, "o") {
			t.Fatalf("event %+v", e)
		}
	}
}

func permanent(err error) bool {
	_, ok := ingest.IsPermanent(err)
	return ok
}

// TestONVIFConfiguredCamera records a configured onvif:// camera through
// New: the fake names a synthetic RTSP camera, the node records it, and a
// motion event of the camera carries the node's keyframe as its image.
func TestONVIFConfiguredCamera(t *testing.T) {
	srv := synth.NewServer(synth.Config{Addr: "127.0.0.1:0", Cameras: []synth.CameraSpec{{Path: "cam1", Codec: synth.CodecH264}}})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hik, _ := onviftest.VendorByName("hikvision")
	fake, err := onviftest.Start(onviftest.Options{Vendor: hik, User: "admin", Password: "pw", StreamURI: srv.URL("cam1"), MaxPullWait: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	c := config.Default()
	c.DataDir = t.TempDir()
	c.NodeID = "node-test"
	c.HTTP.Addr = "127.0.0.1:0"
	c.NATS.Listen = "127.0.0.1:0"
	c.Recording.SegmentDuration = config.Duration(4 * time.Second)
	c.Ingest.AllowPrivateNetworks = true
	c.Cameras = []config.Camera{{ID: "cam1", URL: "onvif://admin:pw@" + strings.TrimPrefix(fake.Base, "http://") + "?stream=0", HistoryDays: 7}}
	if err := c.Resolve(); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := New(ctx, c, Mode{Name: "test", Recorder: true, DecoderCommand: testDecoderCommand(t)}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	nc, err := nats.Connect(a.Bus().ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	msgs := make(chan *nats.Msg, 16)
	sub, err := nc.ChanSubscribe("vigia.events.cam1.*", msgs)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	_ = nc.Flush()

	testenv.WaitFor(t, 20*time.Second, "a keyframe and the subscription", func() bool {
		return a.thumbs.svc.Recording("cam1") && a.thumbs.svc.Stats().Minute > 0 && fake.Subscriptions() == 1 && fake.Calls("PullMessages") > 0
	})
	if err := fake.Set("motion", true); err != nil {
		t.Fatal(err)
	}
	pulls := fake.Calls("PullMessages")
	testenv.WaitFor(t, 10*time.Second, "the start pulled", func() bool { return fake.Calls("PullMessages") > pulls+1 })
	if err := fake.Set("motion", false); err != nil {
		t.Fatal(err)
	}
	var e onvifMessage
	select {
	case m := <-msgs:
		if err := json.Unmarshal(m.Data, &e); err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no event")
	}
	if e.Type != 5 || e.ImageKey != storage.EventImageKey("cam1", e.ID) {
		t.Fatalf("event %+v, want motion with its image", e)
	}
	if w, h := checkJPEG(t, a.store, e.ImageKey); w != 1280 || h != 720 {
		t.Fatalf("event image %dx%d", w, h)
	}
}
