package s3_test

import (
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/storage/storagetest"
	"github.com/vigia/vigia/testenv"
)

// newStore returns a store on a fresh bucket of srv.
func newStore(t *testing.T, srv *testenv.MinIOServer, opts s3.Options) *s3.S3 {
	t.Helper()
	opts.Endpoint = srv.Endpoint
	opts.AccessKey = srv.AccessKey
	opts.SecretKey = srv.SecretKey
	if opts.Bucket == "" {
		opts.Bucket = testenv.NewBucketName(t)
	}
	s, err := s3.New(t.Context(), opts, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("s3.New: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	srv := testenv.MinIO(t)
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return newStore(t, srv, s3.Options{})
	})
}
