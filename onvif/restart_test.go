package onvif_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/onvif"
	"github.com/vigia/vigia/onvif/onviftest"
	"github.com/vigia/vigia/testenv"
)

// subscriber runs PullPoints on cam as the recording node does: again
// after each failure, with one Joiner, until stopped.
type subscriber struct {
	mu     sync.Mutex
	events []onvif.Event
	cancel context.CancelFunc
	done   chan struct{}
}

func subscribe(cam *onviftest.Camera, j *onvif.Joiner) *subscriber {
	ctx, cancel := context.WithCancel(context.Background())
	s := &subscriber{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for ctx.Err() == nil {
			c := onvif.NewClient(cam.URL, user, password)
			pp := &onvif.PullPoint{Client: c, Joiner: j, Wait: 300 * time.Millisecond, OnEvent: func(e onvif.Event) {
				s.mu.Lock()
				s.events = append(s.events, e)
				s.mu.Unlock()
			}}
			_ = pp.Run(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return s
}

func (s *subscriber) stop() { s.cancel(); <-s.done }

func (s *subscriber) got() []onvif.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]onvif.Event(nil), s.events...)
}

// pulled waits until the camera has answered n more PullMessages, so that
// what was queued before has been read.
func pulled(t *testing.T, cam *onviftest.Camera, n int) {
	t.Helper()
	from := cam.Calls("PullMessages")
	testenv.WaitFor(t, 10*time.Second, "pulls", func() bool { return cam.Calls("PullMessages") >= from+n })
}

// TestRestarts: an event that starts before a camera reboot, or before the
// node restarts (a new Joiner), and ends after it is published once.
func TestRestarts(t *testing.T) {
	hik, _ := onviftest.VendorByName("hikvision")
	t.Run("camera reboots", func(t *testing.T) {
		cam := startCamera(t, hik)
		s := subscribe(cam, &onvif.Joiner{})
		defer s.stop()
		testenv.WaitFor(t, 10*time.Second, "the subscription", func() bool { return cam.Subscriptions() == 1 })
		if err := cam.Set("motion", true); err != nil {
			t.Fatal(err)
		}
		pulled(t, cam, 2)
		start := time.Now()
		cam.Reboot()
		testenv.WaitFor(t, 10*time.Second, "a new subscription", func() bool { return cam.Subscriptions() == 1 })
		pulled(t, cam, 2)
		if err := cam.Set("motion", false); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 10*time.Second, "the event", func() bool { return len(s.got()) >= 1 })
		pulled(t, cam, 2)
		ev := s.got()
		if len(ev) != 1 || ev[0].Type != onvif.TypeMotion || !ev[0].Start.Before(start) {
			t.Fatalf("events %+v, want one motion event started before the reboot", ev)
		}
	})
	t.Run("node restarts", func(t *testing.T) {
		cam := startCamera(t, hik)
		s := subscribe(cam, &onvif.Joiner{})
		testenv.WaitFor(t, 10*time.Second, "the subscription", func() bool { return cam.Subscriptions() == 1 })
		if err := cam.Set("input", true); err != nil {
			t.Fatal(err)
		}
		pulled(t, cam, 2)
		s.stop() // the node stops: nothing published yet
		if ev := s.got(); len(ev) != 0 {
			t.Fatalf("%d events before the end: %+v", len(ev), ev)
		}
		s2 := subscribe(cam, &onvif.Joiner{})
		defer s2.stop()
		testenv.WaitFor(t, 10*time.Second, "a new subscription", func() bool { return cam.Subscriptions() == 1 })
		pulled(t, cam, 2)
		if n := len(s2.got()); n != 0 {
			t.Fatalf("the replayed state made %d events", n)
		}
		if err := cam.Set("input", false); err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, 10*time.Second, "the event", func() bool { return len(s2.got()) >= 1 })
		pulled(t, cam, 2)
		if ev := s2.got(); len(ev) != 1 || ev[0].Type != onvif.TypePanic {
			t.Fatalf("events %+v, want one digital input event", ev)
		}
	})
}
