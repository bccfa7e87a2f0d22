package s3

import (
	"bytes"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/testenv"
)

// TestCRC32CReachesTheServer: with ChecksumCRC32C the server receives,
// checks and records a CRC32C of the body, in one request and in parts
// (a checksum announced but not sent would leave it empty).
func TestCRC32CReachesTheServer(t *testing.T) {
	srv := testenv.MinIO(t)
	st, err := New(t.Context(), Options{
		Endpoint: srv.Endpoint, Bucket: testenv.NewBucketName(t), AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
		Checksum: ChecksumCRC32C, PartSize: 5 << 20,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1000, 12 << 20} {
		body := bytes.Repeat([]byte("v"), n)
		if err := st.Put(t.Context(), "rec/c/x.mp4", bytes.NewReader(body), int64(n), storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		oi, err := st.client.StatObject(t.Context(), st.bucket, "rec/c/x.mp4", minio.StatObjectOptions{Checksum: true})
		if err != nil {
			t.Fatal(err)
		}
		if oi.ChecksumCRC32C == "" {
			t.Errorf("%d bytes: no CRC32C recorded by the server", n)
		}
	}
}
