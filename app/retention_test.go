//go:build cgo

package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/storage"
)

// putSegment stores a segment of camera that started age ago.
func putSegment(t *testing.T, a *App, camera string, age time.Duration) string {
	t.Helper()
	key := storage.SegmentKey(camera, time.Now().Add(-age), 6*time.Second, 1)
	if err := a.Store().Put(context.Background(), key, strings.NewReader("x"), 1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return key
}

// stored reports whether key is in the store.
func stored(t *testing.T, a *App, key string) bool {
	t.Helper()
	for _, k := range listKeys(t, a.Store(), key) {
		if k == key {
			return true
		}
	}
	return false
}

// TestRetentionFromDatabase: in a process with the database (`vigia api`,
// `vigia serve`), the API's cameras are swept with the database's
// history_days: a blocked client's camera, which the registry no longer
// lists, loses its expired segments; an edited history_days applies at the
// next sweep. The static sweeper takes the static cameras of the
// configuration and of the registry, never an API id.
func TestRetentionFromDatabase(t *testing.T) {
	a := apiApp(t, Mode{Name: "api", API: true}, func(c *config.Config) {
		c.Cameras = []config.Camera{{ID: "front-door", URL: "rtsp://u:p@127.0.0.1:8554/x", HistoryDays: 1}}
	})
	ctx := t.Context()
	client := createClient(t, a)
	short, _ := created(call(t, a, "POST", "/api/v1/cameras?token="+testOperator, pushCamera(client, 1), 201))
	long, _ := created(call(t, a, "POST", "/api/v1/cameras?token="+testOperator, pushCamera(client, 7), 201))
	shortOld, shortNew := putSegment(t, a, short, 72*time.Hour), putSegment(t, a, short, time.Minute)
	longOld := putSegment(t, a, long, 72*time.Hour)
	staticOld := putSegment(t, a, "front-door", 72*time.Hour)

	call(t, a, "GET", "/api/client/block/"+testOperator+"/"+blockDocument, nil, 200)
	if _, ok, err := a.Bus().GetCamera(ctx, short); err != nil || ok {
		t.Fatalf("camera %s of the blocked client still in the registry: %v %v", short, ok, err)
	}
	if _, swept, err := a.SweepRetention(ctx); err != nil || swept != 2 {
		t.Fatalf("sweep: %d sweepers, %v; want both", swept, err)
	}
	switch {
	case stored(t, a, shortOld):
		t.Errorf("the blocked client's 1-day camera kept a 3-day-old segment (%s)", shortOld)
	case !stored(t, a, shortNew):
		t.Errorf("a segment within retention was deleted (%s)", shortNew)
	case !stored(t, a, longOld):
		t.Errorf("the 7-day camera lost a 3-day-old segment (%s)", longOld)
	case stored(t, a, staticOld):
		t.Errorf("the static camera kept a 3-day-old segment (%s)", staticOld)
	}

	// history_days 7 → 1: the next sweep follows the database.
	edit := pushCamera(client, 1)
	call(t, a, "PUT", "/api/v1/cameras/"+long+"?token="+testOperator, edit, 201)
	if _, _, err := a.SweepRetention(ctx); err != nil {
		t.Fatal(err)
	}
	if stored(t, a, longOld) {
		t.Errorf("after history_days 7 → 1, a 3-day-old segment is kept (%s)", longOld)
	}

	// The static sweeper lists static and synthetic records of the
	// registry, and no API id, which is the database's.
	for _, c := range []camera.Config{
		{ID: "synth-1", ConnectionType: camera.RTSP, SealedURL: "x", HistoryDays: 3, Trusted: true},
		{ID: "4242", ConnectionType: camera.RTMP, HistoryDays: 1},
	} {
		if err := a.Bus().PutCamera(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	cams, err := a.staticRetention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, c := range cams {
		got[c.Camera] = c.Days
	}
	if len(got) != 2 || got["front-door"] != 1 || got["synth-1"] != 3 {
		t.Fatalf("static sweeper's cameras: %v, want front-door (1 day) and synth-1 (3 days)", got)
	}
}
