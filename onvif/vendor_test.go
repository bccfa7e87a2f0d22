package onvif_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/onvif"
	"github.com/vigia/vigia/onvif/onviftest"
	"github.com/vigia/vigia/testenv"
)

// kindType is the event type each fixture kind must map to.
var kindType = map[string]int{
	"motion": 5, "tamper": 1, "scene": 1, "dark": 1, "videoloss": 1,
	"field": 4, "line": 4, "people": 4, "vehicle": 4,
	"input": 2, "sound": 13, "loitering": 13,
}

// instant kinds carry no state: one message is one event.
var instant = map[string]map[string]bool{"hikvision": {"line": true}}

var manufacturer = map[string]string{
	"hikvision": "HIKVISION", "axis": "AXIS", "dahua": "Dahua", "bosch": "Bosch",
	"hanwha": "Hanwha Vision", "tapo": "tp-link", "reolink": "Reolink",
}

const (
	user     = "admin"
	password = "Secret#1&<x>"
	// offset is the fake cameras' clock error: a UsernameToken built on
	// the local clock is refused.
	offset = 2*time.Hour + 13*time.Minute
)

func startCamera(t *testing.T, v onviftest.Vendor) *onviftest.Camera {
	t.Helper()
	cam, err := onviftest.Start(onviftest.Options{Vendor: v, User: user, Password: password, ClockOffset: offset, MaxPullWait: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cam.Close)
	return cam
}

// TestVendors runs the client against the fake camera of every vendor:
// clock, identity, services, profiles, stream and snapshot addresses, and
// every alarm kind through a PullPoint subscription.
func TestVendors(t *testing.T) {
	for _, v := range onviftest.Vendors {
		t.Run(v.Name, func(t *testing.T) {
			cam := startCamera(t, v)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c := onvif.NewClient(cam.URL, user, password)
			if err := c.Sync(ctx); err != nil {
				t.Fatalf("sync: %v", err)
			}
			if d := c.ClockOffset() - offset; d.Abs() > 2*time.Second {
				t.Fatalf("clock offset %v, want %v", c.ClockOffset(), offset)
			}
			info, err := c.GetDeviceInformation(ctx)
			if err != nil {
				t.Fatalf("device information: %v", err)
			}
			if info.Manufacturer != manufacturer[v.Name] || info.Model == "" || info.SerialNumber == "" {
				t.Fatalf("device information %+v", info)
			}
			svc, err := c.Discover(ctx)
			if err != nil {
				t.Fatalf("discover: %v", err)
			}
			if v.SingleEndpoint && (svc.Media != cam.URL || svc.Events != cam.URL) {
				t.Fatalf("single endpoint camera: services %+v, want the device address", svc)
			}
			profiles, err := c.GetProfiles(ctx)
			if err != nil || len(profiles) < 2 {
				t.Fatalf("profiles %+v: %v", profiles, err)
			}
			if profiles[0].Width == 0 || profiles[0].Encoding == "" {
				t.Fatalf("profile %+v lacks its encoder", profiles[0])
			}
			host := strings.TrimPrefix(cam.Base, "http://")
			for _, p := range profiles[:2] {
				uri, err := c.GetStreamUri(ctx, p.Token)
				if err != nil || !strings.HasPrefix(uri, "rtsp://"+host) {
					t.Fatalf("stream uri of %s: %q, %v", p.Token, uri, err)
				}
			}
			main, _ := c.GetStreamUri(ctx, profiles[0].Token)
			sub, _ := c.GetStreamUri(ctx, profiles[1].Token)
			if main == sub {
				t.Fatalf("main and sub stream share the address %s", main)
			}
			if snap, err := c.GetSnapshotUri(ctx, profiles[0].Token); err != nil || !strings.HasPrefix(snap, "http") {
				t.Fatalf("snapshot uri %q: %v", snap, err)
			}
			testEvents(t, ctx, cam, c, v)
		})
	}
}

func testEvents(t *testing.T, ctx context.Context, cam *onviftest.Camera, c *onvif.Client, v onviftest.Vendor) {
	var mu sync.Mutex
	var got []onvif.Event
	pp := &onvif.PullPoint{Client: c, Joiner: &onvif.Joiner{}, Wait: time.Second, OnNotification: func(n onvif.Notification, at time.Time) { t.Logf("%s %s %v %v", n.Path, n.Operation, n.Data, at) }, OnEvent: func(e onvif.Event) {
		mu.Lock()
		got = append(got, e)
		mu.Unlock()
	}}
	pctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- pp.Run(pctx) }()
	testenv.WaitFor(t, 10*time.Second, "the subscription and its first pull", func() bool {
		return cam.Subscriptions() == 1 && cam.Calls("PullMessages") >= 1
	})
	for _, k := range v.Kinds {
		if err := cam.Set(k, true); err != nil {
			t.Fatal(err)
		}
		if !instant[v.Name][k] {
			if err := cam.Set(k, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	testenv.WaitFor(t, 10*time.Second, "one event per kind", func() bool { return count() >= len(v.Kinds) })
	stop()
	if err := <-done; err != nil {
		t.Fatalf("pull point: %v", err)
	}
	if cam.Subscriptions() != 0 {
		t.Fatalf("%d subscriptions left after Run ended, want Unsubscribe", cam.Subscriptions())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(v.Kinds) {
		t.Fatalf("%d events, want %d: %+v", len(got), len(v.Kinds), got)
	}
	for i, k := range v.Kinds {
		e := got[i]
		if e.Type != kindType[k] {
			t.Errorf("%s: event type %d (%s, topic %s), want %d", k, e.Type, e.Label, e.Topic, kindType[k])
		}
		if e.End.Before(e.Start) || time.Since(e.Start).Abs() > time.Minute {
			t.Errorf("%s: event from %v to %v: not corrected to the local clock", k, e.Start, e.End)
		}
	}
}

// TestAuthentication: wrong password and a UsernameToken on the local
// clock (no Sync) are refused; HTTP digest is used when the camera asks.
func TestAuthentication(t *testing.T) {
	hik, _ := onviftest.VendorByName("hikvision")
	dahua, _ := onviftest.VendorByName("dahua")
	ctx := context.Background()
	t.Run("wrong password", func(t *testing.T) {
		cam := startCamera(t, hik)
		c := onvif.NewClient(cam.URL, user, "nope")
		if err := c.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetDeviceInformation(ctx); !errors.Is(err, onvif.ErrUnauthorized) {
			t.Fatalf("err %v, want ErrUnauthorized", err)
		}
	})
	t.Run("no clock offset", func(t *testing.T) {
		cam := startCamera(t, hik)
		c := onvif.NewClient(cam.URL, user, password)
		if _, err := c.GetDeviceInformation(ctx); !errors.Is(err, onvif.ErrUnauthorized) {
			t.Fatalf("err %v, want ErrUnauthorized (token created on the local clock)", err)
		}
	})
	t.Run("digest", func(t *testing.T) {
		cam := startCamera(t, dahua)
		c := onvif.NewClient(cam.URL, user, password)
		if _, err := c.GetDeviceInformation(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Discover(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetProfiles(ctx); err != nil {
			t.Fatal(err)
		}
		bad := onvif.NewClient(cam.URL, user, "nope")
		if _, err := bad.GetDeviceInformation(ctx); !errors.Is(err, onvif.ErrUnauthorized) {
			t.Fatalf("err %v, want ErrUnauthorized", err)
		}
	})
}
