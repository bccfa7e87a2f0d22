package onvif_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/onvif"
	"github.com/vigia/vigia/onvif/onviftest"
	"github.com/vigia/vigia/testenv"
)

// consumer is a consumer address: it parses each Notify and hands its
// notifications on.
func consumer(t *testing.T) (*httptest.Server, chan []onvif.Notification) {
	ch := make(chan []onvif.Notification, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, onvif.MaxResponseBytes))
		res, err := onvif.ParseNotify(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ch <- res.Messages
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

// TestPush runs a base-notification subscription on every vendor's fake:
// the camera's Notify messages become one event per start and end, the
// subscription is renewed, a camera reboot (its subscription gone) ends
// Run with the refused Renew, and cancelling unsubscribes.
func TestPush(t *testing.T) {
	for _, v := range onviftest.Vendors {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			cam, err := onviftest.Start(onviftest.Options{Vendor: v, User: "admin", Password: "pw", ClockOffset: 2 * time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			defer cam.Close()
			srv, ch := consumer(t)
			var mu sync.Mutex
			var evs []onvif.Event
			p := &onvif.Push{
				Client:        onvif.NewClient(cam.URL, "admin", "pw"),
				Joiner:        &onvif.Joiner{},
				Consumer:      srv.URL + "/notify/cam",
				Notifications: ch,
				// Renewed every 3 s: a renewal late by up to 3 s on a
				// loaded machine (or under -race) still finds the
				// subscription open.
				Termination: 6 * time.Second,
				OnEvent:     func(e onvif.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() },
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx) }()
			testenv.WaitFor(t, 20*time.Second, "the subscription's replayed states", func() bool { return cam.Subscriptions() == 1 && cam.Notified() > 0 })
			kind := v.Kinds[0]
			if err := cam.Set(kind, true); err != nil {
				t.Fatal(err)
			}
			n := cam.Notified()
			testenv.WaitFor(t, 10*time.Second, "the start notified", func() bool { return cam.Notified() > n })
			if err := cam.Set(kind, false); err != nil {
				t.Fatal(err)
			}
			testenv.WaitFor(t, 10*time.Second, "the event", func() bool { mu.Lock(); defer mu.Unlock(); return len(evs) == 1 })
			testenv.WaitFor(t, 10*time.Second, "a renewal", func() bool { return cam.Calls("Renew") > 0 })
			mu.Lock()
			e := evs[0]
			mu.Unlock()
			if e.Type != 5 || e.End.Before(e.Start) || time.Since(e.Start).Abs() > time.Minute {
				t.Fatalf("event %+v, want motion now", e)
			}

			cam.Reboot()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("Run returned nil after the camera dropped its subscription")
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Run did not end after the camera dropped its subscription")
			}
			cancel()

			ctx, cancel = context.WithCancel(context.Background())
			subscribed := make(chan struct{})
			p.OnSubscribed = func() { close(subscribed) }
			go func() { done <- p.Run(ctx) }()
			select {
			case <-subscribed:
			case <-time.After(20 * time.Second):
				t.Fatal("no new subscription")
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if n := cam.Subscriptions(); n != 0 {
				t.Fatalf("%d subscriptions after cancel", n)
			}
		})
	}
}

// TestPushNoNotify: a subscription whose consumer address receives
// nothing ends with ErrNoNotify after FirstNotify, and is unsubscribed.
func TestPushNoNotify(t *testing.T) {
	hik, _ := onviftest.VendorByName("hikvision")
	cam, err := onviftest.Start(onviftest.Options{Vendor: hik, User: "admin", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	defer cam.Close()
	p := &onvif.Push{
		Client:        onvif.NewClient(cam.URL, "admin", "pw"),
		Joiner:        &onvif.Joiner{},
		Consumer:      "http://127.0.0.1:1/notify", // nothing listens there
		Notifications: make(chan []onvif.Notification),
		FirstNotify:   300 * time.Millisecond,
		OnEvent:       func(onvif.Event) {},
	}
	if err := p.Run(context.Background()); !errors.Is(err, onvif.ErrNoNotify) {
		t.Fatalf("Run: %v, want ErrNoNotify", err)
	}
	if n := cam.Subscriptions(); n != 0 || cam.Calls("Subscribe") != 1 {
		t.Fatalf("%d subscriptions after Run, %d Subscribe", n, cam.Calls("Subscribe"))
	}
}
