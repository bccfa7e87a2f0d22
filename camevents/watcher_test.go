package camevents

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/onvif/onviftest"
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

func permanent(err error) bool {
	_, ok := ingest.IsPermanent(err)
	return ok
}

// TestResolve: an onvif:// source URL becomes the camera's RTSP URL of the
// stream asked, with the credentials; the dial guard applies.
func TestResolve(t *testing.T) {
	cam := onvifCamera(t, "hikvision")
	host := strings.TrimPrefix(cam.Base, "http://")
	w := New(Config{})
	for stream, want := range map[string]string{
		"0": "rtsp://admin:pw@127.0.0.1:554/Streaming/Channels/101?transportmode=unicast&profile=Profile_1",
		"1": "rtsp://admin:pw@127.0.0.1:554/Streaming/Channels/102?transportmode=unicast&profile=Profile_2",
	} {
		got, err := w.Resolve(camera.Config{ID: "c" + stream, Trusted: true}, "onvif://admin:pw@"+host+"?stream="+stream)
		if err != nil || got != want {
			t.Fatalf("stream %s: %q, %v; want %q", stream, got, err, want)
		}
	}
	// A camera with Media2 alone.
	hik, _ := onviftest.VendorByName("hikvision")
	m2, err := onviftest.Start(onviftest.Options{Vendor: hik, User: "admin", Password: "pw", Media2Only: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	want := "rtsp://admin:pw@" + strings.TrimPrefix(m2.Base, "http://") + "/onvif-media/media.amp?profile=profile_2_h264&sessiontimeout=60&streamtype=unicast"
	if got, err := w.Resolve(camera.Config{ID: "m2", Trusted: true}, "onvif://admin:pw@"+strings.TrimPrefix(m2.Base, "http://")+"?stream=1"); err != nil || got != want {
		t.Fatalf("media2 camera: %q, %v; want %q", got, err, want)
	}
	if _, err := w.Resolve(camera.Config{ID: "c9", Trusted: true}, "onvif://admin:bad@"+host); !permanent(err) {
		t.Fatalf("wrong password: %v, want a permanent error", err)
	}
	if _, err := w.Resolve(camera.Config{ID: "c6", Trusted: true}, "onvif://admin:pw@"+host+"?motion=both"); !permanent(err) {
		t.Fatalf("unknown motion source: %v, want a permanent error", err)
	}
	if _, err := w.Resolve(camera.Config{ID: "c8"}, "onvif://admin:pw@"+host); err == nil {
		t.Fatal("a loopback camera resolved without private networks allowed")
	}
	if got, err := w.Resolve(camera.Config{ID: "c7"}, "rtsp://u:p@203.0.113.7/x"); err != nil || got != "rtsp://u:p@203.0.113.7/x" {
		t.Fatalf("rtsp url changed: %q, %v", got, err)
	}
	if d, _ := w.device("c7"); !d.tryOnce || d.url != "http://203.0.113.7:80/onvif/device_service" {
		t.Fatalf("rtsp camera with credentials: device %+v, want one tried once on port 80", d)
	}
	if _, ok := w.device("c8"); ok {
		t.Fatal("a camera that did not resolve has a device")
	}
}

// recorder collects published events.
type recorder struct {
	mu  sync.Mutex
	evs []Event
}

func (r *recorder) publish(_ context.Context, e Event) error {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
	return nil
}

func (r *recorder) events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.evs...)
}

// TestEvents: the consumer of a camera with a device subscribes, and the
// camera's motion and digital input come out once each with their end and
// the node's keyframe; closing it unsubscribes.
func TestEvents(t *testing.T) {
	cam := onvifCamera(t, "hikvision")
	host := strings.TrimPrefix(cam.Base, "http://")
	var rec recorder
	jpeg := []byte{0xff, 0xd8, 0xff, 0xd9}
	w := New(Config{Publish: rec.publish, Snapshot: func(context.Context, string) ([]byte, error) { return jpeg, nil }})
	if _, err := w.Resolve(camera.Config{ID: "cam-3", Trusted: true}, "onvif://admin:pw@"+host); err != nil {
		t.Fatal(err)
	}
	if w.Consumer()("cam-4") != nil {
		t.Fatal("a camera without a device got a consumer")
	}
	c := w.Consumer()("cam-3")
	if c == nil {
		t.Fatal("no consumer")
	}
	testenv.WaitFor(t, 20*time.Second, "the subscription", func() bool { return cam.Subscriptions() == 1 && cam.Calls("PullMessages") > 0 })
	for _, k := range []string{"motion", "input"} {
		if err := cam.Set(k, true); err != nil {
			t.Fatal(err)
		}
		pulls := cam.Calls("PullMessages")
		testenv.WaitFor(t, 10*time.Second, "the start pulled", func() bool { return cam.Calls("PullMessages") > pulls+1 })
		if err := cam.Set(k, false); err != nil {
			t.Fatal(err)
		}
	}
	testenv.WaitFor(t, 20*time.Second, "two events", func() bool { return len(rec.events()) >= 2 })
	c.Close()
	if n := cam.Subscriptions(); n != 0 {
		t.Fatalf("%d subscriptions after Close", n)
	}
	got := rec.events()
	if len(got) != 2 || got[0].Type != 5 || got[1].Type != 2 || got[0].Kind != "motion" || got[1].Kind != "digital input" {
		t.Fatalf("events %+v, want motion (5) then digital input (2)", got)
	}
	for _, e := range got {
		if e.Camera != "cam-3" || e.End.Before(e.Start) || time.Since(e.Start).Abs() > time.Minute || !strings.HasPrefix(e.ID, "o") || string(e.Image) != string(jpeg) {
			t.Fatalf("event %+v", e)
		}
	}
}

// TestMotionSource: with motion=auto the camera's motion replaces the
// node's once its subscription carries a motion topic; motion=camera
// always; motion=vigia never, and the camera's motion events are dropped.
func TestMotionSource(t *testing.T) {
	for _, tt := range []struct {
		name         string
		query        string
		before       bool // CameraMotion before the subscription
		after        bool // CameraMotion once subscribed
		vigia        bool // VigiaMotion
		cameraEvents int  // the camera's motion events published
	}{
		{"auto", "", false, true, true, 1},
		{"camera", "?motion=camera", true, true, false, 1},
		{"vigia", "?motion=vigia", false, false, true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cam := onvifCamera(t, "hikvision")
			host := strings.TrimPrefix(cam.Base, "http://")
			var rec recorder
			w := New(Config{Publish: rec.publish})
			if _, err := w.Resolve(camera.Config{ID: "m", Trusted: true}, "onvif://admin:pw@"+host+tt.query); err != nil {
				t.Fatal(err)
			}
			if got := w.CameraMotion("m"); got != tt.before {
				t.Fatalf("CameraMotion before subscribing = %v", got)
			}
			if got := w.VigiaMotion("m"); got != tt.vigia {
				t.Fatalf("VigiaMotion = %v", got)
			}
			c := w.Consumer()("m")
			testenv.WaitFor(t, 20*time.Second, "the subscription", func() bool { return cam.Calls("PullMessages") > 1 })
			if got := w.CameraMotion("m"); got != tt.after {
				t.Fatalf("CameraMotion once subscribed = %v", got)
			}
			for _, k := range []string{"motion", "input"} {
				if err := cam.Set(k, true); err != nil {
					t.Fatal(err)
				}
				pulls := cam.Calls("PullMessages")
				testenv.WaitFor(t, 10*time.Second, "the start pulled", func() bool { return cam.Calls("PullMessages") > pulls+1 })
				if err := cam.Set(k, false); err != nil {
					t.Fatal(err)
				}
			}
			testenv.WaitFor(t, 20*time.Second, "the digital input", func() bool {
				for _, e := range rec.events() {
					if e.Type == 2 {
						return true
					}
				}
				return false
			})
			c.Close()
			if w.CameraMotion("m") && tt.name == "auto" {
				t.Fatal("auto: the camera's motion still used once its subscription ended")
			}
			n := 0
			for _, e := range rec.events() {
				if e.Type == 5 {
					n++
				}
			}
			if n != tt.cameraEvents {
				t.Fatalf("%d camera motion events, want %d", n, tt.cameraEvents)
			}
		})
	}
}
