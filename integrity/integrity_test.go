package integrity_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/testenv"
)

func fsStore(t *testing.T) storage.Store {
	st, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func minioStore(t *testing.T) storage.Store {
	srv := testenv.MinIO(t)
	st, err := s3.New(t.Context(), s3.Options{Endpoint: srv.Endpoint, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
		Bucket: testenv.NewBucketName(t)}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

const cam = "cam-1"

var t0 = time.Date(2026, 3, 10, 11, 50, 0, 0, time.UTC)

// store puts n 4-minute segments from t0 and records each, as the upload
// path does, and returns their keys.
func store(t *testing.T, ctx context.Context, st storage.Store, rec *integrity.Recorder, from time.Time, n int) []string {
	t.Helper()
	var keys []string
	for i := range n {
		start := from.Add(time.Duration(i) * 4 * time.Minute)
		key := storage.SegmentKey(cam, start, 4*time.Minute, 100)
		body := []byte(fmt.Sprintf("segment %d of %s", i, start))
		hr := integrity.NewHashReader(bytes.NewReader(body))
		if err := st.Put(ctx, key, hr, int64(len(body)), storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		sum, ok := hr.Sum(int64(len(body)))
		if !ok || sum != sha256.Sum256(body) {
			t.Fatalf("hash of the upload of %s: ok=%v", key, ok)
		}
		if err := rec.Record(ctx, key, int64(len(body)), sum); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, key)
	}
	return keys
}

func problems(r integrity.Report) []string {
	var out []string
	for _, p := range r.Problems {
		out = append(out, p.Kind+" "+p.Key)
	}
	slices.Sort(out)
	return out
}

// TestVerify: over fs and MinIO, a segment whose bytes changed and one that
// was removed are reported with their keys; an intact range passes; the
// manifests are chained across hours and ignored by segment listings.
func TestVerify(t *testing.T) {
	for name, open := range map[string]func(*testing.T) storage.Store{"fs": fsStore, "minio": minioStore} {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st := open(t)
			rec := integrity.NewRecorder(integrity.RecorderConfig{Store: st, Log: zaptest.NewLogger(t)})
			keys := store(t, ctx, st, rec, t0, 6) // 11:50 to 12:14: two hours
			from, to := t0.Add(-time.Hour), t0.Add(time.Hour)

			r, err := integrity.Verify(ctx, st, cam, from, to)
			if err != nil {
				t.Fatal(err)
			}
			if !r.OK() || r.Segments != 6 || r.Manifests != 2 {
				t.Fatalf("intact: %+v", r)
			}
			m, err := integrity.ReadManifest(ctx, st, integrity.ManifestKey(cam, t0.Add(time.Hour)))
			if err != nil || m == nil || m.Prev == nil || m.Prev.Key != integrity.ManifestKey(cam, t0) || m.Prev.Count != 3 {
				t.Fatalf("second hour's manifest does not link the first: %+v %v", m, err)
			}

			if err := st.Put(ctx, keys[1], bytes.NewReader([]byte("segment 1 of XXXX")), -1, storage.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := st.Delete(ctx, []string{keys[4]}); err != nil {
				t.Fatal(err)
			}
			r, err = integrity.Verify(ctx, st, cam, from, to)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"changed " + keys[1], "removed " + keys[4]}
			if got := problems(r); !slices.Equal(got, want) {
				t.Fatalf("problems %q, want %q", got, want)
			}
		})
	}
}

// TestChainDetectsManifestEdit: rewriting an earlier hour's manifest to
// match a changed segment breaks the link the next hour holds.
func TestChainDetectsManifestEdit(t *testing.T) {
	ctx := t.Context()
	st := fsStore(t)
	rec := integrity.NewRecorder(integrity.RecorderConfig{Store: st})
	keys := store(t, ctx, st, rec, t0, 6)
	body := []byte("forged")
	if err := st.Put(ctx, keys[0], bytes.NewReader(body), -1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	mk := integrity.ManifestKey(cam, t0)
	m, _ := integrity.ReadManifest(ctx, st, mk)
	sum := sha256.Sum256(body)
	m.Segments[0].SHA256, m.Segments[0].Size = fmt.Sprintf("%x", sum), int64(len(body))
	b := m.Encode()
	if err := st.Put(ctx, mk, bytes.NewReader(b), -1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := integrity.Verify(ctx, st, cam, t0, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got := problems(r); !slices.Equal(got, []string{"chain " + mk}) {
		t.Fatalf("problems %q, want the chain of %s", got, mk)
	}
}

// TestRecoverLaggingManifest: a segment stored without its manifest write
// (a crash between the two) is added, marked recovered, by the next
// process's first write for the camera, and the chain continues.
func TestRecoverLaggingManifest(t *testing.T) {
	ctx := t.Context()
	st := fsStore(t)
	rec := integrity.NewRecorder(integrity.RecorderConfig{Store: st})
	keys := store(t, ctx, st, rec, t0, 2) // 11:50, 11:54
	lost := storage.SegmentKey(cam, t0.Add(8*time.Minute), 4*time.Minute, 100)
	if err := st.Put(ctx, lost, bytes.NewReader([]byte("lost")), -1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// A new process: its first segment is in the next hour.
	rec2 := integrity.NewRecorder(integrity.RecorderConfig{Store: st})
	more := store(t, ctx, st, rec2, t0.Add(12*time.Minute), 1)
	r, err := integrity.Verify(ctx, st, cam, t0, t0.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() || r.Segments != 4 {
		t.Fatalf("after recovery: %+v", r)
	}
	m, _ := integrity.ReadManifest(ctx, st, integrity.ManifestKey(cam, t0))
	if len(m.Segments) != 3 || m.Segments[2].Key != lost || !m.Segments[2].Recovered || m.Segments[0].Key != keys[0] {
		t.Fatalf("first hour's manifest: %+v", m.Segments)
	}
	m2, _ := integrity.ReadManifest(ctx, st, integrity.ManifestKey(cam, t0.Add(time.Hour)))
	if m2.Prev == nil || m2.Prev.Count != 3 || m2.Segments[0].Key != more[0] {
		t.Fatalf("second hour's manifest: %+v", m2)
	}
}

// TestHashReaderRetry: an upload that rewinds and sends again yields the
// hash of one whole pass; a partial seek yields none.
func TestHashReaderRetry(t *testing.T) {
	body := []byte("0123456789abcdef")
	hr := integrity.NewHashReader(bytes.NewReader(body))
	buf := make([]byte, 5)
	_, _ = hr.Read(buf)
	_, _ = hr.Seek(0, 0)
	all, _ := bytes.NewBuffer(nil).ReadFrom(hr)
	if sum, ok := hr.Sum(int64(len(body))); !ok || all != int64(len(body)) || sum != sha256.Sum256(body) {
		t.Fatal("rewound upload: wrong hash")
	}
	_, _ = hr.Seek(3, 0)
	if _, ok := hr.Sum(int64(len(body))); ok {
		t.Fatal("a seek into the middle kept a hash")
	}
}

// TestRecorderConcurrentCameras: cameras recorded at once each get their
// own complete manifest.
func TestRecorderConcurrentCameras(t *testing.T) {
	ctx := t.Context()
	st := fsStore(t)
	rec := integrity.NewRecorder(integrity.RecorderConfig{Store: st})
	cams := []string{"c1", "c2", "c3", "c4"}
	errs := make(chan error, len(cams))
	for _, c := range cams {
		go func() {
			for i := range 5 {
				key := storage.SegmentKey(c, t0.Add(time.Duration(i)*time.Minute), time.Minute, 10)
				body := []byte(key)
				if err := st.Put(ctx, key, bytes.NewReader(body), int64(len(body)), storage.PutOptions{}); err != nil {
					errs <- err
					return
				}
				if err := rec.Record(ctx, key, int64(len(body)), sha256.Sum256(body)); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range cams {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cams {
		r, err := integrity.Verify(ctx, st, c, t0, t0.Add(time.Hour))
		if err != nil || !r.OK() || r.Segments != 5 {
			t.Errorf("camera %s: %+v %v", c, r, err)
		}
	}
}

// failingPuts refuses manifest writes while fail is set.
type failingPuts struct {
	storage.Store
	fail bool
}

func (f *failingPuts) Put(ctx context.Context, key string, r io.Reader, size int64, opts storage.PutOptions) error {
	if f.fail && integrity.IsManifestKey(key) {
		return errors.New("refused")
	}
	return f.Store.Put(ctx, key, r, size, opts)
}

// TestFailedManifestWrite: a manifest write that fails does not lose the
// entry: the next write stores it, even when the next segment starts a new
// hour, and the chain verifies.
func TestFailedManifestWrite(t *testing.T) {
	ctx := t.Context()
	st := &failingPuts{Store: fsStore(t)}
	rec := integrity.NewRecorder(integrity.RecorderConfig{Store: st})
	store(t, ctx, st, rec, t0, 2) // 11:50, 11:54
	st.fail = true
	key := storage.SegmentKey(cam, t0.Add(8*time.Minute), 4*time.Minute, 100)
	if err := st.Store.Put(ctx, key, bytes.NewReader([]byte("x")), 1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Record(ctx, key, 1, sha256.Sum256([]byte("x"))); err == nil {
		t.Fatal("the refused manifest write was not reported")
	}
	st.fail = false
	store(t, ctx, st, rec, t0.Add(12*time.Minute), 1) // 12:02: a new hour
	r, err := integrity.Verify(ctx, st, cam, t0, t0.Add(time.Hour))
	if err != nil || !r.OK() || r.Segments != 4 {
		t.Fatalf("after the failed write: %+v %v", r, err)
	}
}

func testKey(seed string) ed25519.PrivateKey {
	s := sha256.Sum256([]byte(seed))
	return ed25519.NewKeyFromSeed(s[:])
}

// TestSignedManifests: manifests written with a key verify with its public
// key; a manifest rewritten to match a changed segment, which no later
// link covers, passes the hash chain but fails its signature; after a
// rotation the chain verifies with the old and new public keys together,
// each manifest naming its key by id, and a manifest of a key not given is
// reported as such.
func TestSignedManifests(t *testing.T) {
	ctx := t.Context()
	st := fsStore(t)
	old, cur := testKey("old secret"), testKey("new secret")
	oldPub, curPub := old.Public().(ed25519.PublicKey), cur.Public().(ed25519.PublicKey)
	store(t, ctx, st, integrity.NewRecorder(integrity.RecorderConfig{Store: st, SignKey: old}), t0, 2) // 11:50, 11:54
	// The secret rotated: a new process signs with the new key.
	keys := store(t, ctx, st, integrity.NewRecorder(integrity.RecorderConfig{Store: st, SignKey: cur}), t0.Add(12*time.Minute), 2) // 12:02, 12:06
	from, to := t0.Add(-time.Hour), t0.Add(2*time.Hour)

	r, err := integrity.Verify(ctx, st, cam, from, to, curPub, oldPub)
	if err != nil || !r.OK() || r.Signed != 2 || r.Manifests != 2 {
		t.Fatalf("both keys given: %+v %v", r, err)
	}
	m1, _ := integrity.ReadManifest(ctx, st, integrity.ManifestKey(cam, t0))
	m2key := integrity.ManifestKey(cam, t0.Add(time.Hour))
	m2, _ := integrity.ReadManifest(ctx, st, m2key)
	if m1.KeyID != sign.KeyID(oldPub) || m2.KeyID != sign.KeyID(curPub) {
		t.Fatalf("key ids %q %q", m1.KeyID, m2.KeyID)
	}
	r, _ = integrity.Verify(ctx, st, cam, from, to, curPub)
	if got := problems(r); !slices.Equal(got, []string{"key " + integrity.ManifestKey(cam, t0)}) {
		t.Fatalf("the old key not given: problems %q", got)
	}

	// Forge the last hour: a changed segment and its manifest rewritten to
	// match. The chain cannot see it; the signature does.
	body := []byte("forged")
	if err := st.Put(ctx, keys[1], bytes.NewReader(body), -1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	m2.Segments[1].SHA256, m2.Segments[1].Size = fmt.Sprintf("%x", sum), int64(len(body))
	b := m2.Encode()
	if err := st.Put(ctx, m2key, bytes.NewReader(b), -1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if r, _ := integrity.Verify(ctx, st, cam, from, to); !r.OK() {
		t.Fatalf("without keys the forgery should pass the chain: %q", problems(r))
	}
	r, _ = integrity.Verify(ctx, st, cam, from, to, curPub, oldPub)
	if got := problems(r); !slices.Equal(got, []string{"signature " + m2key}) {
		t.Fatalf("forged manifest: problems %q", got)
	}

	// An unsigned manifest is a problem once keys are given.
	m2.KeyID, m2.Signature = "", ""
	b = m2.Encode()
	if err := st.Put(ctx, m2key, bytes.NewReader(b), -1, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	r, _ = integrity.Verify(ctx, st, cam, from, to, curPub, oldPub)
	if got := problems(r); !slices.Equal(got, []string{"signature " + m2key}) {
		t.Fatalf("unsigned manifest: problems %q", got)
	}
}

// TestStoredCountsFailures: the upload hook does not fail on a manifest
// write that fails; it counts it in
// vigia_integrity_manifest_failures_total, and the next write completes
// the manifest.
func TestStoredCountsFailures(t *testing.T) {
	ctx := t.Context()
	st := &failingPuts{Store: fsStore(t), fail: true}
	reg := prometheus.NewRegistry()
	rec := integrity.NewRecorder(integrity.RecorderConfig{Store: st, Registerer: reg})
	key := storage.SegmentKey(cam, t0, time.Minute, 10)
	body := []byte("x")
	if _, err := integrity.Put(ctx, st, key, bytes.NewReader(body), 1, storage.PutOptions{}, false); err != nil {
		t.Fatal(err)
	}
	rec.Stored(ctx, key, 1, sha256.Sum256(body))
	if n := failures(t, reg); n != 1 {
		t.Fatalf("failures counted: %v", n)
	}
	st.fail = false
	store(t, ctx, st, rec, t0.Add(time.Minute), 1)
	if r, err := integrity.Verify(ctx, st, cam, t0, t0.Add(time.Hour)); err != nil || !r.OK() || r.Segments != 2 {
		t.Fatalf("after the failure: %+v %v", r, err)
	}
}

// failures reads vigia_integrity_manifest_failures_total from reg.
func failures(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || mfs[0].GetName() != "vigia_integrity_manifest_failures_total" {
		t.Fatalf("registered: %v %v", mfs, err)
	}
	return mfs[0].GetMetric()[0].GetCounter().GetValue()
}

// TestPutHashes: Put returns the SHA-256 of the bytes stored, whether the
// store reads the body through the upload or the file is hashed first.
func TestPutHashes(t *testing.T) {
	ctx := t.Context()
	st := fsStore(t)
	body := []byte("spooled segment bytes")
	p := t.TempDir() + "/seg.mp4"
	if err := os.WriteFile(p, body, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, links := range []bool{false, true} {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		key := storage.SegmentKey(cam, t0.Add(time.Duration(i)*time.Minute), time.Minute, 10)
		sum, err := integrity.Put(ctx, st, key, f, int64(len(body)), storage.PutOptions{Immutable: true}, links)
		f.Close()
		if err != nil || sum != sha256.Sum256(body) {
			t.Fatalf("links %v: sum %x, %v", links, sum, err)
		}
	}
}
