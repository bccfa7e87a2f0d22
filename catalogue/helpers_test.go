package catalogue

import (
	"bytes"
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/testenv"
)

// backend makes a fresh, empty store.
type backend struct {
	name string
	new  func(t *testing.T) storage.Store
}

// backends are the fs store and the S3 store on a real MinIO (one server
// for the test, a bucket per store).
func backends(t *testing.T) []backend {
	srv := testenv.MinIO(t)
	return []backend{
		{"fs", func(t *testing.T) storage.Store {
			st, err := fs.New(t.TempDir(), fs.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
		{"s3", func(t *testing.T) storage.Store {
			st, err := s3.New(t.Context(), s3.Options{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
				Bucket: testenv.NewBucketName(t)}, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
	}
}

// putSegment stores a segment of camera as the recorder does: the init
// size in its key and its init-size metadata (0: neither), and a body of
// init+100 bytes. It returns the key.
func putSegment(t *testing.T, st storage.Store, camera string, start time.Time, dur time.Duration, init int64) string {
	t.Helper()
	return putSegmentKey(t, st, storage.SegmentKey(camera, start, dur, init), init)
}

// putOlderSegment stores a segment as recorders did before keys carried
// the init size: {startMs}_{durMs}.mp4, the init size in its init-size
// metadata only (0: none).
func putOlderSegment(t *testing.T, st storage.Store, camera string, start time.Time, dur time.Duration, init int64) string {
	t.Helper()
	return putSegmentKey(t, st, storage.SegmentKey(camera, start, dur, 0), init)
}

func putSegmentKey(t *testing.T, st storage.Store, key string, init int64) string {
	t.Helper()
	var md map[string]string
	if init > 0 {
		md = map[string]string{MetaInitSize: strconv.FormatInt(init, 10)}
	}
	body := bytes.Repeat([]byte{1}, int(init)+100)
	if err := st.Put(context.Background(), key, bytes.NewReader(body), int64(len(body)), storage.PutOptions{Metadata: md}); err != nil {
		t.Fatal(err)
	}
	return key
}

// putGap stores a gap record as the Journal would.
func putGap(t *testing.T, st storage.Store, g status.Gap) string {
	t.Helper()
	key := recordKey(g)
	if key == "" {
		t.Fatalf("no key for %+v", g)
	}
	if err := st.Put(context.Background(), key, bytes.NewReader([]byte("{}")), 2, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	return key
}

// countingStore counts Stat and List calls.
type countingStore struct {
	storage.Store
	stats, lists atomic.Int64
}

func (c *countingStore) Stat(ctx context.Context, key string) (storage.Object, error) {
	c.stats.Add(1)
	return c.Store.Stat(ctx, key)
}

func (c *countingStore) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListPage, error) {
	c.lists.Add(1)
	return c.Store.List(ctx, prefix, opts)
}

// at returns a time of 2024-05-06 (UTC) at h:m:s.
func at(h, m, s int) time.Time { return time.Date(2024, 5, 6, h, m, s, 0, time.UTC) }

func ms(t time.Time) int64 { return t.UnixMilli() }

// memStore returns an fs store in a temporary directory (usable inside a
// synctest bubble: it waits on nothing but the disk).
func memStore(t *testing.T) storage.Store {
	st, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}
