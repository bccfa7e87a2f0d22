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
	waitFor(t, 20*time.Second, "the subscription", func() bool { return cam.Subscriptions() == 1 && cam.Calls("PullMessages") > 0 })

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
	waitFor(t, 20*time.Second, "two events", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= 2 })
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
