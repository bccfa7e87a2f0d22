// Package s3 is a storage.Store on any S3-compatible service (AWS S3, MinIO,
// ...). It is the only package that imports minio-go.
//
// Requests are retried with exponential backoff on transient failures
// (network errors, 5xx, throttling): Get, Stat, List, Delete and Tags always,
// Put only when its reader is an io.Seeker so the body can be sent again.
package s3

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"go.uber.org/zap"

	"github.com/vigia/vigia/storage"
)

var _ storage.Store = (*S3)(nil)
var _ storage.TagReader = (*S3)(nil)

// Defaults of Options.
const (
	DefaultPartSize    = 16 << 20
	DefaultRegion      = "us-east-1"
	DefaultMaxAttempts = 4
	DefaultRetryBase   = 200 * time.Millisecond
	DefaultRetryMax    = 5 * time.Second
)

// maxListLimit is the largest page S3 returns.
const maxListLimit = 1000

// Options configure an S3 store.
type Options struct {
	// Endpoint is host:port, or a URL whose scheme sets UseSSL
	// ("https://s3.example.com", "http://127.0.0.1:9000").
	Endpoint string
	// Bucket holds the objects. New creates it if missing.
	Bucket string
	// AccessKey and SecretKey are the credentials. Both empty means anonymous.
	AccessKey string
	// SecretKey is the secret of AccessKey. It is never logged.
	SecretKey string
	// Region of the bucket. It defaults to "us-east-1".
	Region string
	// UseSSL uses HTTPS with a host:port Endpoint. It defaults to false.
	UseSSL bool
	// PartSize is the multipart upload part size. It defaults to 16 MiB.
	PartSize uint64
	// Checksum is how uploaded bodies are protected: ChecksumCRC32C (the
	// default) sends them unsigned with a CRC32C trailer the server checks;
	// ChecksumSHA256 signs them with SHA-256 chunk signatures over plain
	// HTTP (over HTTPS they are unsigned, TLS protecting them).
	Checksum string
	// MaxAttempts bounds the tries of one operation. It defaults to 4.
	MaxAttempts int
	// RetryBase is the first backoff, doubled each retry. It defaults to 200 ms.
	RetryBase time.Duration
	// RetryMax caps the backoff. It defaults to 5 seconds.
	RetryMax time.Duration
	// ObjectLocking says the bucket has (or, created by New, gets) S3
	// Object Lock: legal holds (SetLegalHold) work, and Delete removes
	// every version of a key instead of leaving the data behind a delete
	// marker, failing for a version under a legal hold. It defaults to
	// false.
	ObjectLocking bool
}

// S3 is a storage.Store on an S3 bucket.
type S3 struct {
	unsigned bool // bodies unsigned, with a CRC32C trailer
	client   *minio.Client
	core     minio.Core
	bucket   string
	partSize uint64
	retry    retryPolicy
	desc     string
	log      *zap.Logger
	locking  bool // Options.ObjectLocking
}

// Upload checksums (Options.Checksum).
const (
	// ChecksumCRC32C sends bodies unsigned with a CRC32C trailer: cheap
	// (the CPU computes CRC32C in hardware) and checked by the server, but
	// the server must support trailing checksums (MinIO, AWS S3).
	ChecksumCRC32C = "crc32c"
	// ChecksumSHA256 signs bodies with SHA-256 chunk signatures over plain
	// HTTP: any S3 server takes them, at the cost of hashing every byte.
	ChecksumSHA256 = "sha256"
)

// New connects to the service, creates the bucket if it is missing, and
// returns the store. log receives retry and failure messages.
func New(ctx context.Context, opts Options, log *zap.Logger) (*S3, error) {
	if log == nil {
		log = zap.NewNop()
	}
	host, secure, err := parseEndpoint(opts.Endpoint, opts.UseSSL)
	if err != nil {
		return nil, err
	}
	if opts.Bucket == "" {
		return nil, fmt.Errorf("s3 store: %w", ErrNoBucket)
	}
	region := opts.Region
	if region == "" {
		region = DefaultRegion
	}
	switch opts.Checksum {
	case "":
		opts.Checksum = ChecksumCRC32C
	case ChecksumCRC32C, ChecksumSHA256:
	default:
		return nil, fmt.Errorf("s3 store: %w %q", ErrChecksum, opts.Checksum)
	}
	client, err := minio.New(host, &minio.Options{
		Creds:  credentials.NewStaticV4(opts.AccessKey, opts.SecretKey, ""),
		Secure: secure,
		Region: region,
		// Trailing checksums: with unsigned bodies, minio-go sends a
		// CRC32C of the body after it, which the server verifies.
		TrailingHeaders: opts.Checksum == ChecksumCRC32C,
		// Retries are ours (see retry.go), so a failing call is tried
		// MaxAttempts times in all, not MaxAttempts times minio-go's count.
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 store %s: %w", host, err)
	}
	scheme := "http"
	if secure {
		scheme = "https"
	}
	s := &S3{
		unsigned: opts.Checksum == ChecksumCRC32C,
		client:   client,
		core:     minio.Core{Client: client},
		bucket:   opts.Bucket,
		partSize: opts.PartSize,
		retry:    newRetryPolicy(opts),
		desc:     "s3:" + scheme + "://" + host + "/" + opts.Bucket,
		locking:  opts.ObjectLocking,
	}
	if s.partSize == 0 {
		s.partSize = DefaultPartSize
	}
	s.log = log.With(zap.String("store", s.desc))
	if err := s.ensureBucket(ctx, region); err != nil {
		return nil, err
	}
	return s, nil
}

// parseEndpoint returns host:port and whether to use TLS.
func parseEndpoint(endpoint string, useSSL bool) (string, bool, error) {
	if endpoint == "" {
		return "", false, fmt.Errorf("s3 store: %w", ErrNoEndpoint)
	}
	if !strings.Contains(endpoint, "://") {
		return endpoint, useSSL, nil
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", false, fmt.Errorf("s3 store endpoint: %w", err)
	}
	if u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil {
		return "", false, fmt.Errorf("s3 store endpoint %q: %w", u.Redacted(), ErrBadEndpoint)
	}
	switch u.Scheme {
	case "http":
		return u.Host, false, nil
	case "https":
		return u.Host, true, nil
	}
	return "", false, fmt.Errorf("s3 store endpoint scheme %q: %w", u.Scheme, ErrBadEndpoint)
}

// ensureBucket creates the bucket unless it exists.
func (s *S3) ensureBucket(ctx context.Context, region string) error {
	var exists bool
	err := s.do(ctx, "bucket exists", "", func() error {
		var err error
		exists, err = s.client.BucketExists(ctx, s.bucket)
		return err
	})
	if err != nil {
		return fmt.Errorf("s3 store %s: %w", s.desc, err)
	}
	if exists {
		return nil
	}
	err = s.do(ctx, "make bucket", "", func() error {
		return s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: region, ObjectLocking: s.locking})
	})
	var er minio.ErrorResponse
	if errors.As(err, &er) && (er.Code == "BucketAlreadyOwnedByYou" || er.Code == "BucketAlreadyExists") {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("s3 store %s: create bucket: %w", s.desc, err)
	}
	s.log.Info("created bucket")
	return nil
}

// Describe returns "s3:{scheme}://{host}/{bucket}".
func (s *S3) Describe() string { return s.desc }

// Ping checks that the service answers and the bucket exists.
func (s *S3) Ping(ctx context.Context) error {
	var exists bool
	err := s.do(ctx, "ping", "", func() error {
		var err error
		exists, err = s.client.BucketExists(ctx, s.bucket)
		return err
	})
	if err != nil {
		return fmt.Errorf("s3 ping %s: %w", s.desc, err)
	}
	if !exists {
		return fmt.Errorf("s3 ping %s: %w", s.desc, ErrNoBucket)
	}
	return nil
}
