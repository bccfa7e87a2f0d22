package s3_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/testenv"
)

func TestPutRetriesThroughOutage(t *testing.T) {
	srv := testenv.MinIO(t)
	core, logs := observer.New(zapcore.WarnLevel)
	bucket := testenv.NewBucketName(t)
	s, err := s3.New(t.Context(), s3.Options{
		Endpoint: srv.URL(), Bucket: bucket, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
		MaxAttempts: 1000, RetryBase: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond,
	}, zap.New(core))
	if err != nil {
		t.Fatalf("s3.New: %v", err)
	}
	srv.Stop()

	data := bytes.Repeat([]byte("segment "), 1000)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { // exits when Put returns
		done <- s.Put(ctx, "rec/outage/seg.mp4", bytes.NewReader(data), int64(len(data)), storage.PutOptions{})
	}()
	testenv.WaitFor(t, time.Minute, "a retried Put", func() bool {
		return logs.FilterMessageSnippet("retrying").FilterField(zap.String("op", "put")).Len() > 0
	})
	srv.Start()
	if err := <-done; err != nil {
		t.Fatalf("Put across the outage: %v", err)
	}
	obj, err := s.Stat(ctx, "rec/outage/seg.mp4")
	if err != nil || obj.Size != int64(len(data)) {
		t.Fatalf("Stat after outage = %+v, %v", obj, err)
	}
	for _, e := range logs.All() {
		for _, f := range e.Context {
			if strings.Contains(f.String, srv.SecretKey) {
				t.Fatalf("log entry %q shows the secret key", e.Message)
			}
		}
	}
}

func TestStreamPutNotRetried(t *testing.T) {
	srv := testenv.MinIO(t)
	core, logs := observer.New(zapcore.WarnLevel)
	s, err := s3.New(t.Context(), s3.Options{
		Endpoint: srv.Endpoint, Bucket: testenv.NewBucketName(t), AccessKey: srv.AccessKey, SecretKey: srv.SecretKey,
		MaxAttempts: 5, RetryBase: time.Millisecond, RetryMax: time.Millisecond,
	}, zap.New(core))
	if err != nil {
		t.Fatalf("s3.New: %v", err)
	}
	srv.Stop()
	err = s.Put(t.Context(), "a/b", onlyReader{strings.NewReader("abc")}, 3, storage.PutOptions{})
	if err == nil {
		t.Fatal("Put with the server down succeeded")
	}
	if n := logs.FilterField(zap.String("op", "put")).Len(); n != 0 {
		t.Fatalf("a non-seekable Put was retried %d times", n)
	}
	if err := s.Ping(t.Context()); err == nil {
		t.Fatal("Ping with the server down succeeded")
	}
	if n := logs.FilterField(zap.String("op", "ping")).Len(); n != 4 {
		t.Fatalf("Ping logged %d retries, want 4 (5 attempts)", n)
	}
}

// onlyReader hides Seek from a reader.
type onlyReader struct{ r *strings.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestNewOptions(t *testing.T) {
	srv := testenv.MinIO(t)
	tests := []struct {
		name    string
		opts    s3.Options
		wantErr error
	}{
		{name: "no endpoint", opts: s3.Options{Bucket: "b"}, wantErr: s3.ErrNoEndpoint},
		{name: "no bucket", opts: s3.Options{Endpoint: srv.Endpoint}, wantErr: s3.ErrNoBucket},
		{name: "bad scheme", opts: s3.Options{Endpoint: "ftp://127.0.0.1:1", Bucket: "b"}, wantErr: s3.ErrBadEndpoint},
		{name: "path in url", opts: s3.Options{Endpoint: "http://127.0.0.1:1/x", Bucket: "b"}, wantErr: s3.ErrBadEndpoint},
		{name: "host port", opts: s3.Options{Endpoint: srv.Endpoint, Bucket: testenv.NewBucketName(t),
			AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}},
		{name: "url", opts: s3.Options{Endpoint: srv.URL(), Bucket: testenv.NewBucketName(t),
			AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := s3.New(t.Context(), tc.opts, zap.NewNop())
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("New err = %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			want := "s3:http://" + srv.Endpoint + "/" + tc.opts.Bucket
			if s.Describe() != want || strings.Contains(s.Describe(), srv.SecretKey) {
				t.Fatalf("Describe() = %q, want %q", s.Describe(), want)
			}
			// A second store on the now existing bucket works.
			if _, err := s3.New(t.Context(), tc.opts, zap.NewNop()); err != nil {
				t.Fatalf("New on an existing bucket: %v", err)
			}
		})
	}
}

func TestWrongCredentials(t *testing.T) {
	srv := testenv.MinIO(t)
	_, err := s3.New(t.Context(), s3.Options{
		Endpoint: srv.Endpoint, Bucket: testenv.NewBucketName(t), AccessKey: srv.AccessKey, SecretKey: "wrong-secret-key",
	}, zap.NewNop())
	if err == nil {
		t.Fatal("New with a wrong secret succeeded")
	}
	if strings.Contains(err.Error(), "wrong-secret-key") {
		t.Fatalf("error shows the secret: %v", err)
	}
}

func TestListDelimiterUnsupported(t *testing.T) {
	srv := testenv.MinIO(t)
	s := newStore(t, srv, s3.Options{})
	_, err := s.List(t.Context(), "a/", storage.ListOptions{Delimiter: "_"})
	if !errors.Is(err, s3.ErrDelimiter) {
		t.Fatalf("List with delimiter _ err = %v, want ErrDelimiter", err)
	}
}
