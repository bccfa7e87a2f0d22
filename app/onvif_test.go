package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/motion"
	"github.com/vigia/vigia/onvif/onviftest"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestONVIFConfiguredCamera records a configured onvif:// camera through
// New: the fake names a synthetic RTSP camera, the node records it, and a
// motion event of the camera carries the node's keyframe as its image,
// pulled (PullPoint) or pushed to the node's consumer address
// (events=push).
func TestONVIFConfiguredCamera(t *testing.T) {
	for _, mode := range []string{"pull", "push"} {
		t.Run(mode, func(t *testing.T) { testONVIFConfiguredCamera(t, mode == "push") })
	}
}

func testONVIFConfiguredCamera(t *testing.T, push bool) {
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
	c.Cameras = []config.Camera{{ID: "cam1", URL: "onvif://admin:pw@" + strings.TrimPrefix(fake.Base, "http://") + "?stream=0" + map[bool]string{true: "&events=push"}[push], HistoryDays: 7}}
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

	// Messages the camera has given: pulled, or pushed and accepted.
	given := func() int { return fake.Calls("PullMessages") + fake.Notified() }
	testenv.WaitFor(t, 20*time.Second, "a keyframe and the subscription", func() bool {
		return a.thumbs.svc.Recording("cam1") && a.thumbs.svc.Stats().Minute > 0 && fake.Subscriptions() == 1 && given() > 0 &&
			fake.Calls("Subscribe")+fake.Calls("CreatePullPointSubscription") > 0
	})
	if push != (fake.Calls("Subscribe") == 1) || push == (fake.Calls("CreatePullPointSubscription") == 1) {
		t.Fatalf("push %v: Subscribe %d, CreatePullPointSubscription %d", push, fake.Calls("Subscribe"), fake.Calls("CreatePullPointSubscription"))
	}
	if err := fake.Set("motion", true); err != nil {
		t.Fatal(err)
	}
	n := given()
	testenv.WaitFor(t, 10*time.Second, "the start given", func() bool { return given() > n })
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

// TestCameraMotionReplacesVigia: for a camera whose onvif:// URL chooses
// the camera's motion, the node's motion detector gets no consumer and
// publishes none of its events; another camera keeps the detector.
func TestCameraMotionReplacesVigia(t *testing.T) {
	hik, _ := onviftest.VendorByName("hikvision")
	fake, err := onviftest.Start(onviftest.Options{Vendor: hik, User: "admin", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	a := thumbsApp(t)
	a.cfg.HTTP.PublicURL = "http://127.0.0.1:1"
	a.onvif = newONVIF(a)
	if _, err := a.onvif.Resolve(camera.Config{ID: "cam-own", Trusted: true}, "onvif://admin:pw@"+strings.TrimPrefix(fake.Base, "http://")+"?motion=camera"); err != nil {
		t.Fatal(err)
	}
	factory := a.startMotion()
	if factory == nil {
		t.Fatal("no motion consumer")
	}
	if c := factory("cam-own"); c != nil {
		c.Close()
		t.Fatal("the detector looks at a camera whose own motion is chosen")
	}
	c := factory("cam-other")
	if c == nil {
		t.Fatal("the detector does not look at a camera without ONVIF")
	}
	c.Close()
	// The outbox is nil: publishing would panic.
	if err := a.publishMotion(motion.Event{ID: "m1", Camera: "cam-own", Start: time.Now(), End: time.Now()}); err != nil {
		t.Fatal(err)
	}
}
