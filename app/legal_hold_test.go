//go:build cgo

package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/testenv"
)

// TestLegalHoldObjectLockSweep: a node with the database storing into a
// MinIO bucket with Object Lock. Segments of an API camera older than its
// history_days are stored through the upload path (hashes in the hour
// manifest); a hold placed through the API on part of that hour keeps the
// held segment and its manifest through a sweep that deletes the rest; a
// direct delete with the service's credentials is refused by the bucket;
// after the hold is lifted through the API, the next sweep deletes them.
func TestLegalHoldObjectLockSweep(t *testing.T) {
	m := testenv.MinIO(t)
	a := apiApp(t, Mode{Name: "api", API: true}, func(c *config.Config) {
		c.Storage.Backend = "s3"
		c.Storage.Endpoint = m.Endpoint
		c.Storage.AccessKey = m.AccessKey
		c.Storage.SecretKey = m.SecretKey
		c.Storage.Bucket = testenv.NewBucketName(t)
		c.Storage.ObjectLock = true
	})
	ctx := t.Context()
	client := createClient(t, a)
	cam, _ := created(call(t, a, "POST", "/api/v1/cameras?token="+testOperator, pushCamera(client, 1), 201))

	// Three days old: past the camera's one day of history.
	hour := time.Now().Add(-72 * time.Hour).UTC().Truncate(time.Hour)
	upload := func(at time.Duration) string {
		t.Helper()
		body := []byte("segment of " + cam + " at " + at.String())
		p := filepath.Join(t.TempDir(), "seg.mp4")
		if err := os.WriteFile(p, body, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		seg := segmenter.Segment{Camera: cam, Start: hour.Add(at), Duration: time.Minute, InitSize: 10, Size: int64(len(body)), Path: p}
		if err := a.uploadSegment(ctx, seg, f); err != nil {
			t.Fatal(err)
		}
		return segmentKey(seg)
	}
	held, free := upload(10*time.Minute), upload(30*time.Minute)
	manifest := integrity.ManifestKey(cam, hour)
	if rep, err := integrity.Verify(ctx, a.Store(), cam, hour, hour.Add(time.Hour)); err != nil || !rep.OK() || rep.Segments != 2 {
		t.Fatalf("the uploads are not in their manifest: %+v %v", rep, err)
	}

	camID, _ := strconv.Atoi(cam)
	h := call(t, a, "POST", "/api/v1/holds?token="+testOperator, map[string]any{"camera_id": camID,
		"start_at": hour.Add(10 * time.Minute).UnixMilli(), "end_at": hour.Add(11 * time.Minute).UnixMilli(), "reason": "police request 42"}, 201).(map[string]any)
	if h["object_lock"] != float64(2) {
		t.Fatalf("hold: %v; want the segment and its manifest locked", h)
	}

	if _, swept, err := a.SweepRetention(ctx); err != nil || swept != 2 {
		t.Fatalf("sweep under the hold: %d sweepers, %v", swept, err)
	}
	if !stored(t, a, held) || !stored(t, a, manifest) {
		t.Fatalf("the sweeper deleted held objects (segment kept %v, manifest kept %v)", stored(t, a, held), stored(t, a, manifest))
	}
	if stored(t, a, free) {
		t.Fatalf("the sweeper kept %s, outside the hold and past history_days", free)
	}

	// The service's own credentials, straight to the bucket: every version
	// of the held objects is refused.
	direct, err := s3.New(ctx, s3.Options{Endpoint: m.Endpoint, AccessKey: m.AccessKey, SecretKey: m.SecretKey,
		Bucket: a.cfg.Storage.Bucket, ObjectLocking: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{held, manifest} {
		if err := direct.Delete(ctx, []string{k}); err == nil {
			t.Errorf("a direct delete of held %s succeeded", k)
		}
		if _, err := direct.Stat(ctx, k); err != nil {
			t.Errorf("held %s after a direct delete: %v", k, err)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	id := strconv.FormatInt(int64(h["id"].(float64)), 10)
	lift := call(t, a, "POST", "/api/v1/holds/"+id+"/lift?token="+testOperator, map[string]any{"reason": "case closed"}, 200).(map[string]any)
	if lift["active"] != false || lift["object_lock"] != float64(2) {
		t.Fatalf("lift: %v", lift)
	}
	if _, _, err := a.SweepRetention(ctx); err != nil {
		t.Fatalf("sweep after the lift: %v", err)
	}
	for _, k := range []string{held, manifest} {
		if stored(t, a, k) {
			t.Errorf("%s kept by the sweep after the hold was lifted", k)
		}
	}
	if _, err := direct.Stat(context.Background(), held); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("%s after the sweep: %v, want not found", held, err)
	}
}
