package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
)

func TestCameraRegistry(t *testing.T) {
	b := openTest(t, testOptions(t))
	ctx := testCtx(t)
	c := camera.Config{ID: "7", ClientID: 3, ConnectionType: camera.RTSP, SealedURL: "sealed", HistoryDays: 7}
	if err := b.PutCamera(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, ok, err := b.GetCamera(ctx, "7")
	if err != nil || !ok || got != c {
		t.Fatalf("get: %+v %v %v", got, ok, err)
	}
	if err := b.PutCamera(ctx, camera.Config{ID: "a.b"}); !errors.Is(err, ErrInvalidCamera) {
		t.Fatalf("bad id: %v", err)
	}

	var mu sync.Mutex
	var seen []string
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- b.WatchCameras(wctx, func(ch CameraChange) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, fmt.Sprintf("%s:%v:%d", ch.ID, ch.Deleted, ch.Config.ClientID))
		})
	}()
	waitFor(t, "initial state delivered", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(seen) < 2 {
			return fmt.Errorf("seen %v", seen)
		}
		return nil
	})
	if err := b.DeleteCamera(ctx, "7"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteCamera(ctx, "never-there"); err != nil {
		t.Fatalf("delete missing: %v", err)
	}
	waitFor(t, "watch sees the initial state, the end marker and the delete", func() error {
		mu.Lock()
		defer mu.Unlock()
		want := fmt.Sprint([]string{"7:false:3", ":false:0", "7:true:0"})
		if fmt.Sprint(seen) != want {
			return fmt.Errorf("seen %v, want %v", seen, want)
		}
		return nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("watch: %v", err)
	}
	if _, ok, err := b.GetCamera(ctx, "7"); ok || err != nil {
		t.Fatalf("after delete: %v %v", ok, err)
	}
}

func TestEventsConsumedOnce(t *testing.T) {
	b := openTest(t, testOptions(t))
	ctx := testCtx(t)
	for i := 0; i < 3; i++ {
		if err := b.PublishEvent(ctx, Event{ID: "ev-1", Camera: "7", Type: 5, AtMs: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PublishEvent(ctx, Event{ID: "ev-2", Camera: "7", Type: 1, AtMs: 2, ImageKey: "events/7/ev-2.jpg"}); err != nil {
		t.Fatal(err)
	}
	if err := b.PublishEvent(ctx, Event{Camera: "7", Type: 1}); !errors.Is(err, ErrInvalidMessage) {
		t.Fatalf("no id: %v", err)
	}
	var mu sync.Mutex
	got := map[string]int{}
	failed := false
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- b.ConsumeEvents(cctx, "test-events", func(_ context.Context, e Event) error {
			mu.Lock()
			defer mu.Unlock()
			if e.ID == "ev-2" && !failed { // the first delivery fails: it comes again
				failed = true
				return errors.New("database down")
			}
			got[e.ID]++
			return nil
		})
	}()
	waitFor(t, "both events stored", func() error {
		mu.Lock()
		defer mu.Unlock()
		if got["ev-1"] != 1 || got["ev-2"] != 1 {
			return fmt.Errorf("got %v", got)
		}
		return nil
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ConsumeEvents did not return after cancel")
	}
}
