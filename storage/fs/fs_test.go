package fs_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/storage/storagetest"
)

var testSecret = []byte("0123456789abcdef-test-secret")

// newServed returns a store in a temp dir whose Handler is served by httptest
// at the store's BaseURL.
func newServed(t *testing.T, now func() time.Time) (*fs.FS, *httptest.Server) {
	t.Helper()
	var store atomic.Pointer[fs.FS]
	srv := httptest.NewServer(http.StripPrefix("/media", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		store.Load().Handler().ServeHTTP(w, r)
	})))
	t.Cleanup(srv.Close)
	f, err := fs.New(t.TempDir(), fs.Options{BaseURL: srv.URL + "/media/", Secret: testSecret, Now: now})
	if err != nil {
		t.Fatalf("fs.New: %v", err)
	}
	store.Store(f)
	return f, srv
}

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		f, _ := newServed(t, nil)
		return f
	})
}

func TestNewOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    fs.Options
		wantErr error
	}{
		{name: "no signing", opts: fs.Options{}},
		{name: "signing", opts: fs.Options{BaseURL: "http://x/media", Secret: testSecret}},
		{name: "weak secret", opts: fs.Options{BaseURL: "http://x/media", Secret: []byte("short")}, wantErr: fs.ErrWeakSecret},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fs.New(t.TempDir(), tc.opts)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("New err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestSignedURLDisabled(t *testing.T) {
	f, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.SignedURL(t.Context(), "a/b", time.Minute); !errors.Is(err, fs.ErrSigningDisabled) {
		t.Fatalf("SignedURL err = %v, want ErrSigningDisabled", err)
	}
	rec := httptest.NewRecorder()
	f.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/a/b?exp=99999999999&sig=00", nil))
	if rec.Code != http.StatusForbidden {
		t.Fatalf("handler without secret: status %d, want 403", rec.Code)
	}
}

func TestHandlerExpiryAndMethods(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Date(2024, 5, 6, 7, 0, 0, 0, time.UTC).Unix())
	clock := func() time.Time { return time.Unix(now.Load(), 0) }
	f, _ := newServed(t, clock)
	ctx := t.Context()
	if err := f.Put(ctx, "v/a.mp4", strings.NewReader("video"), 5, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	u, err := f.SignedURL(ctx, "v/a.mp4", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		method  string
		advance int64
		want    int
	}{
		{name: "fresh", method: http.MethodGet, want: http.StatusOK},
		{name: "head", method: http.MethodHead, want: http.StatusOK},
		{name: "post", method: http.MethodPost, want: http.StatusMethodNotAllowed},
		{name: "at expiry", method: http.MethodGet, advance: 10, want: http.StatusOK},
		{name: "after expiry", method: http.MethodGet, advance: 1, want: http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now.Add(tc.advance)
			req, err := http.NewRequestWithContext(ctx, tc.method, u, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusOK && resp.Header.Get("Content-Type") != "video/mp4" {
				t.Fatalf("Content-Type %q, want video/mp4", resp.Header.Get("Content-Type"))
			}
		})
	}
}

func TestHandlerRefusesOtherKeys(t *testing.T) {
	f, srv := newServed(t, nil)
	ctx := t.Context()
	for _, k := range []string{"a/1", "a/2"} {
		if err := f.Put(ctx, k, strings.NewReader(k), -1, storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	u, err := f.SignedURL(ctx, "a/1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	query := u[strings.IndexByte(u, '?'):]
	tests := []struct {
		name string
		url  string
		want int
	}{
		{name: "signed key", url: srv.URL + "/media/a/1" + query, want: http.StatusOK},
		{name: "other key same signature", url: srv.URL + "/media/a/2" + query, want: http.StatusForbidden},
		{name: "traversal", url: srv.URL + "/media/a/%2e%2e/a/1" + query, want: http.StatusForbidden},
		{name: "sidecar tree", url: srv.URL + "/media/.meta/a/1.json" + query, want: http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Get(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("GET %s: status %d, want %d", tc.url, resp.StatusCode, tc.want)
			}
		})
	}
}

func TestNoLeftovers(t *testing.T) {
	root := t.TempDir()
	f, err := fs.New(root, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	opts := storage.PutOptions{Metadata: map[string]string{"camera": "c1"}, Tags: map[string]string{"retention-days": "3"}}
	if err := f.Put(ctx, "rec/c1/x.mp4", bytes.NewReader([]byte("data")), 4, opts); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := f.Put(cancelled, "rec/c1/y.mp4", bytes.NewReader([]byte("data")), 4, storage.PutOptions{}); err == nil {
		t.Fatal("Put with a cancelled context succeeded")
	}
	if err := f.Delete(ctx, []string{"rec/c1/x.mp4"}); err != nil {
		t.Fatal(err)
	}
	var left []string
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && p != filepath.Join(root, ".meta") {
			rel, _ := filepath.Rel(root, p)
			left = append(left, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 0 {
		t.Fatalf("files left after failed Put and Delete: %v", left)
	}
}

func TestKeyConflict(t *testing.T) {
	f, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := f.Put(ctx, "a", strings.NewReader("x"), 1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Put(ctx, "a/b", strings.NewReader("x"), 1, storage.PutOptions{}); err == nil {
		t.Fatal("Put of a/b below object a succeeded")
	}
	if err := f.Delete(ctx, []string{"a/b"}); err != nil {
		t.Fatalf("Delete of a key below an object: %v", err)
	}
}

func BenchmarkFSPut(b *testing.B) {
	f, err := fs.New(b.TempDir(), fs.Options{})
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	ctx := b.Context()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	i := 0
	for b.Loop() {
		key := storage.SegmentKey("bench", time.UnixMilli(int64(1714979000000+i*60000)), time.Minute, 812)
		if err := f.Put(ctx, key, bytes.NewReader(data), int64(len(data)), storage.PutOptions{ContentType: "video/mp4"}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// An immutable file is stored by a hard link: the object is the file's
// inode, and it outlives the file's own name.
func TestPutImmutableLinks(t *testing.T) {
	root := t.TempDir()
	f, err := fs.New(filepath.Join(root, "store"), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Repeat([]byte("segment-"), 4096)
	src := filepath.Join(root, "spool.mp4")
	if err := os.WriteFile(src, want, 0o640); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ctx := context.Background()
	key := "rec/7/2026/11/22/02/1795312800000_10000.mp4"
	if err := f.Put(ctx, key, in, int64(len(want)), storage.PutOptions{ContentType: "video/mp4", Metadata: map[string]string{"codec": "h264"}, Immutable: true}); err != nil {
		t.Fatalf("Put: %v", err)
	}
	srcInfo, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	var linked bool
	filepath.WalkDir(filepath.Join(root, "store"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".mp4") {
			if st, err := os.Stat(p); err == nil && os.SameFile(st, srcInfo) {
				linked = true
			}
		}
		return nil
	})
	if !linked {
		t.Error("the object is not a hard link of the immutable file")
	}
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, f, key)
	if !bytes.Equal(got, want) {
		t.Fatalf("object holds %d bytes, want the file's %d", len(got), len(want))
	}
	obj, err := f.Stat(ctx, key)
	if err != nil || obj.Metadata["codec"] != "h264" || obj.Size != int64(len(want)) {
		t.Fatalf("Stat = %+v, %v", obj, err)
	}
}

// A reader that is not at the file's start, or a size that does not match,
// is copied (or refused) as with any reader: never linked whole.
func TestPutImmutableFallsBack(t *testing.T) {
	root := t.TempDir()
	f, err := fs.New(filepath.Join(root, "store"), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "spool.mp4")
	if err := os.WriteFile(src, []byte("0123456789"), 0o640); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := in.Seek(4, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Put(ctx, "a/b.mp4", in, 6, storage.PutOptions{Immutable: true}); err != nil {
		t.Fatalf("Put from offset 4: %v", err)
	}
	if got := string(readAll(t, f, "a/b.mp4")); got != "456789" {
		t.Fatalf("object = %q, want the bytes after the offset", got)
	}
	if _, err := in.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Put(ctx, "a/c.mp4", in, 99, storage.PutOptions{Immutable: true}); !errors.Is(err, storage.ErrSizeMismatch) {
		t.Fatalf("Put with a wrong size: %v, want ErrSizeMismatch", err)
	}
}

func readAll(t *testing.T, f *fs.FS, key string) []byte {
	t.Helper()
	rc, err := f.Get(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatalf("Get %s: %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return b
}

// Puts into a camera's directories while Deletes empty and prune them (a
// bench that discards each segment once stored, a retention sweep): every
// Put succeeds at once, whether linked or copied.
func TestPutWhileDeletePrunes(t *testing.T) {
	root := t.TempDir()
	f, err := fs.New(filepath.Join(root, "store"), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("x"), 512)
	src := filepath.Join(root, "spool.mp4")
	if err := os.WriteFile(src, data, 0o640); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const rounds = 300
	var wg sync.WaitGroup
	errs := make(chan error, 4*rounds)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				key := fmt.Sprintf("rec/c/2026/11/22/%02d/%d_%d.mp4", i%24, w, i)
				var r io.Reader = bytes.NewReader(data)
				immutable := w%2 == 0
				if immutable {
					in, err := os.Open(src)
					if err != nil {
						errs <- err
						return
					}
					r = in
				}
				err := f.Put(ctx, key, r, int64(len(data)), storage.PutOptions{Immutable: immutable})
				if c, ok := r.(io.Closer); ok {
					_ = c.Close()
				}
				if err != nil {
					errs <- fmt.Errorf("put %s: %w", key, err)
					continue
				}
				if err := f.Delete(ctx, []string{key}); err != nil {
					errs <- fmt.Errorf("delete %s: %w", key, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
