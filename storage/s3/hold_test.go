package s3_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/retention"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/testenv"
)

// TestLegalHoldObjectLock: on a MinIO bucket with Object Lock, a segment
// under a legal hold survives the retention sweeper and a direct S3
// DeleteObject of its version with the service's credentials; once the hold
// is lifted, the next sweep deletes it, every version of it.
func TestLegalHoldObjectLock(t *testing.T) {
	srv := testenv.MinIO(t)
	ctx := context.Background()
	bucket := testenv.NewBucketName(t)
	st, err := s3.New(ctx, s3.Options{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
		Bucket: bucket, ObjectLocking: true}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 20, 12, 0, 0, 0, time.UTC)
	old := now.Add(-10 * 24 * time.Hour)
	held := storage.SegmentKey("cam", old, time.Minute, 100)
	free := storage.SegmentKey("cam", old.Add(time.Hour), time.Minute, 100)
	for _, k := range []string{held, free} {
		if err := st.Put(ctx, k, bytes.NewReader([]byte("segment")), 7, storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetLegalHold(ctx, held, true); err != nil {
		t.Fatal(err)
	}
	if on, err := st.LegalHold(ctx, held); err != nil || !on {
		t.Fatalf("legal hold read back: %v %v", on, err)
	}

	// The service's own credentials, straight to S3: the held version
	// cannot be deleted.
	direct, err := minio.New(srv.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	info, err := direct.StatObject(ctx, bucket, held, minio.StatObjectOptions{})
	if err != nil || info.VersionID == "" {
		t.Fatalf("stat %s: version %q, %v", held, info.VersionID, err)
	}
	if err := direct.RemoveObject(ctx, bucket, held, minio.RemoveObjectOptions{VersionID: info.VersionID}); err == nil {
		t.Fatal("DeleteObject of a held version succeeded")
	}
	// The store's Delete deletes versions, so it fails too.
	if err := st.Delete(ctx, []string{held}); err == nil {
		t.Fatal("Delete of a held object succeeded")
	}

	holds := []retention.Hold{{Camera: "cam", FromMs: old.UnixMilli(), ToMs: old.Add(time.Minute).UnixMilli()}}
	sw, err := retention.New(retention.Config{Store: st,
		Cameras: func(context.Context) ([]retention.CameraRetention, error) {
			return []retention.CameraRetention{{Camera: "cam", Days: 1}}, nil
		},
		Holds: func(context.Context) ([]retention.Hold, error) { return holds, nil },
		Now:   func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := sw.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(ctx, held); err != nil || r.Held != 1 {
		t.Fatalf("held segment after the sweep: %v (report %+v)", err, r)
	}
	if _, err := st.Stat(ctx, free); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("expired segment after the sweep: %v", err)
	}
	if n := versions(t, direct, bucket, free); n != 0 {
		t.Errorf("expired segment keeps %d versions", n)
	}

	// Lifted: the next sweep deletes it.
	if err := st.SetLegalHold(ctx, held, false); err != nil {
		t.Fatal(err)
	}
	holds = nil
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := versions(t, direct, bucket, held); n != 0 {
		t.Errorf("segment after the hold was lifted keeps %d versions", n)
	}
}

func versions(t *testing.T, c *minio.Client, bucket, key string) int {
	t.Helper()
	n := 0
	for o := range c.ListObjects(context.Background(), bucket, minio.ListObjectsOptions{Prefix: key, WithVersions: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		if o.Key == key {
			n++
		}
	}
	return n
}
