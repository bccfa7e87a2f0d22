package s3_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

// TestChecksums: bodies uploaded with either checksum, in one request and
// in parts, read back byte for byte; an unknown checksum is refused.
func TestChecksums(t *testing.T) {
	srv := testenv.MinIO(t)
	body := make([]byte, 12<<20)
	for i := range body {
		body[i] = byte(i*7 + i>>13)
	}
	for _, sum := range []string{s3.ChecksumCRC32C, s3.ChecksumSHA256} {
		st := newStore(t, srv, s3.Options{Checksum: sum, PartSize: 5 << 20})
		for _, n := range []int{300 << 10, len(body)} {
			key := fmt.Sprintf("rec/c/%s_%d.mp4", sum, n)
			if err := st.Put(t.Context(), key, bytes.NewReader(body[:n]), int64(n), storage.PutOptions{}); err != nil {
				t.Fatalf("%s, %d bytes: %v", sum, n, err)
			}
			rc, err := st.Get(t.Context(), key, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rc)
			_ = rc.Close()
			if err != nil || !bytes.Equal(got, body[:n]) {
				t.Fatalf("%s, %d bytes: read back %d bytes (%v), not what was put", sum, n, len(got), err)
			}
		}
	}
	if _, err := s3.New(t.Context(), s3.Options{Endpoint: srv.Endpoint, Bucket: "b", Checksum: "md4"}, nil); !errors.Is(err, s3.ErrChecksum) {
		t.Errorf("unknown checksum: %v", err)
	}
}
