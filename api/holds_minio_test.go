package api

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/testenv"
)

// TestLegalHoldsObjectLock: on a MinIO bucket with Object Lock, placing a
// hold on a camera range puts an S3 legal hold on its segment and hour
// manifest (the store then refuses to delete them) and leaves the segment
// outside the range free; lifting the hold clears them.
func TestLegalHoldsObjectLock(t *testing.T) {
	srv := testenv.MinIO(t)
	ctx := context.Background()
	st, err := s3.New(ctx, s3.Options{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
		Bucket: testenv.NewBucketName(t), ObjectLocking: true}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "sqlite", func(c *Config) { c.Store = st })
	clientID, _, _ := e.clientWithUser("lock@example.com")
	cam := e.camera(clientID)
	c := strconv.FormatInt(cam, 10)
	t0 := e.clock.Now().Add(-2 * time.Hour).UTC().Truncate(time.Hour)
	in := storage.SegmentKey(c, t0.Add(10*time.Minute), time.Minute, 100)
	out := storage.SegmentKey(c, t0.Add(30*time.Minute), time.Minute, 100)
	manifest := integrity.ManifestKey(c, t0)
	for _, k := range []string{in, out, manifest} {
		if err := st.Put(ctx, k, bytes.NewReader([]byte("x")), 1, storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := e.do("POST", op("/api/v1/holds"), map[string]any{"camera_id": cam, "start_at": t0.Add(10 * time.Minute).UnixMilli(),
		"end_at": t0.Add(11 * time.Minute).UnixMilli(), "reason": "court order"}).want(t, 201)
	h := r.obj(t)
	if h["object_lock"] != float64(2) {
		t.Fatalf("object lock count: %s", r.body)
	}
	for k, want := range map[string]bool{in: true, manifest: true, out: false} {
		if on, err := st.LegalHold(ctx, k); err != nil || on != want {
			t.Errorf("%s legal hold %v (%v), want %v", k, on, err, want)
		}
	}
	if err := st.Delete(ctx, []string{in}); err == nil {
		t.Fatal("a held segment was deleted")
	}
	id := strconv.FormatInt(int64(h["id"].(float64)), 10)
	e.do("POST", op("/api/v1/holds/"+id+"/lift"), map[string]any{"reason": "case closed"}).want(t, 200)
	if on, err := st.LegalHold(ctx, in); err != nil || on {
		t.Fatalf("legal hold after the lift: %v %v", on, err)
	}
	if err := st.Delete(ctx, []string{in}); err != nil {
		t.Fatalf("delete after the lift: %v", err)
	}
}
