package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/testenv"
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
	if err := b.DeleteCamera(ctx, "7"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteCamera(ctx, "never-there"); err != nil {
		t.Fatalf("delete missing: %v", err)
	}
	if _, ok, err := b.GetCamera(ctx, "7"); ok || err != nil {
		t.Fatalf("after delete: %v %v", ok, err)
	}
}

// TestCameraRecordDecode: records that camera.Decode refuses (not JSON,
// not recordable, filed under another id) are errors of GetCamera, and
// ListCameras returns the others beside the joined error.
func TestCameraRecordDecode(t *testing.T) {
	b := openTest(t, testOptions(t))
	ctx := testCtx(t)
	good := camera.Config{ID: "cam-1", ConnectionType: camera.RTMP, HistoryDays: 1}
	if err := b.PutCamera(ctx, good); err != nil {
		t.Fatal(err)
	}
	kv := b.KV(BucketCameras)
	for key, raw := range map[string]string{
		"not-json":  "{",
		"no-url":    `{"id":"no-url","connection_type":0}`,
		"other-key": `{"id":"cam-1","connection_type":1}`,
	} {
		if _, err := kv.Put(ctx, key, []byte(raw)); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := b.GetCamera(ctx, key); ok || !errors.Is(err, camera.ErrInvalid) {
			t.Fatalf("GetCamera(%q) = %v, %v; want camera.ErrInvalid", key, ok, err)
		}
	}
	list, err := b.ListCameras(ctx)
	if !errors.Is(err, camera.ErrInvalid) || len(list) != 1 || list[0] != good {
		t.Fatalf("ListCameras = %+v, %v; want only %+v and camera.ErrInvalid", list, err, good)
	}
}

func TestEventsConsumedOnce(t *testing.T) {
	b := openTest(t, testOptions(t))
	ctx := testCtx(t)
	for i := 0; i < 3; i++ {
		publishEvent(t, b, Event{ID: "ev-1", Camera: "7", Type: 5, AtMs: 1})
	}
	publishEvent(t, b, Event{ID: "ev-2", Camera: "7", Type: 1, AtMs: 2, ImageKey: "events/7/ev-2.jpg"})
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
	testenv.WaitForNil(t, testWait, "both events stored", func() error {
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
