package s3

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/vigia/vigia/storage"
)

// Put uploads the object; minio-go switches to a multipart upload for objects
// larger than PartSize (or of unknown size). Transient failures are retried
// only if r is an io.Seeker, after seeking it back to where it started.
func (s *S3) Put(ctx context.Context, key string, r io.Reader, size int64, opts storage.PutOptions) error {
	if err := storage.ValidateKey(key); err != nil {
		return fmt.Errorf("s3 put: %w", err)
	}
	md, err := storage.NormalizeMetadata(opts.Metadata)
	if err != nil {
		return fmt.Errorf("s3 put %q: %w", key, err)
	}
	if err := storage.ValidateTags(opts.Tags); err != nil {
		return fmt.Errorf("s3 put %q: %w", key, err)
	}
	popts := minio.PutObjectOptions{
		ContentType:  storage.ContentTypeFor(key, opts.ContentType),
		UserMetadata: md,
		UserTags:     opts.Tags,
		PartSize:     s.partSize,
		// Unsigned, the body gets a CRC32C trailer instead of a SHA-256
		// of each chunk (Options.Checksum).
		DisableContentSha256: s.unsigned,
	}
	if s.unsigned {
		// Named explicitly: minio-go's automatic checksum only announces
		// the algorithm and sends no value when the body is unsigned.
		popts.Checksum = minio.ChecksumCRC32C
	}
	attempts, rewind := 1, func() error { return nil }
	if seeker, ok := r.(io.Seeker); ok {
		if start, err := seeker.Seek(0, io.SeekCurrent); err == nil {
			attempts = s.retry.attempts
			rewind = func() error {
				_, err := seeker.Seek(start, io.SeekStart)
				return err
			}
		}
	}
	err = s.doWith(ctx, "put", key, attempts, rewind, func() error {
		info, err := s.client.PutObject(ctx, s.bucket, key, r, size, popts)
		if err == nil && size >= 0 && info.Size != size {
			return fmt.Errorf("stored %d bytes, want %d: %w", info.Size, size, storage.ErrSizeMismatch)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("s3 put %q: %w", key, err)
	}
	return nil
}

// Get reads length bytes of the object from offset with one ranged GET
// (retried while no byte has been returned).
func (s *S3) Get(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if err := storage.ValidateKey(key); err != nil {
		return nil, fmt.Errorf("s3 get: %w", err)
	}
	if offset < 0 {
		return nil, fmt.Errorf("s3 get %q: offset %d: %w", key, offset, storage.ErrInvalidRange)
	}
	if length == 0 {
		obj, err := s.Stat(ctx, key)
		if err != nil {
			return nil, err
		}
		if offset > 0 && offset >= obj.Size {
			return nil, fmt.Errorf("s3 get %q: offset %d of %d bytes: %w", key, offset, obj.Size, storage.ErrInvalidRange)
		}
		return io.NopCloser(strings.NewReader("")), nil
	}
	gopts := minio.GetObjectOptions{}
	var err error
	switch {
	case length > 0:
		err = gopts.SetRange(offset, offset+length-1)
	case offset > 0:
		err = gopts.SetRange(offset, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("s3 get %q: %w", key, err)
	}
	var rc io.ReadCloser
	err = s.do(ctx, "get", key, func() error {
		var err error
		rc, _, _, err = s.core.GetObject(ctx, s.bucket, key, gopts)
		return err
	})
	if err != nil {
		err = mapErr("get", key, err)
		if offset == 0 && isInvalidRange(err) {
			// A range from 0 of an empty object: S3 refuses it, the contract gives "".
			return io.NopCloser(strings.NewReader("")), nil
		}
		return nil, err
	}
	return rc, nil
}

// Stat describes the object with its content type and user metadata.
func (s *S3) Stat(ctx context.Context, key string) (storage.Object, error) {
	if err := storage.ValidateKey(key); err != nil {
		return storage.Object{}, fmt.Errorf("s3 stat: %w", err)
	}
	var info minio.ObjectInfo
	err := s.do(ctx, "stat", key, func() error {
		var err error
		info, err = s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
		return err
	})
	if err != nil {
		return storage.Object{}, mapErr("stat", key, err)
	}
	var md map[string]string
	if len(info.UserMetadata) > 0 {
		md = make(map[string]string, len(info.UserMetadata))
		for k, v := range info.UserMetadata {
			md[strings.ToLower(k)] = v
		}
	}
	return storage.Object{
		Key:         key,
		Size:        info.Size,
		Modified:    info.LastModified,
		Metadata:    md,
		ContentType: info.ContentType,
	}, nil
}

// Tags returns the object's tags.
func (s *S3) Tags(ctx context.Context, key string) (map[string]string, error) {
	if err := storage.ValidateKey(key); err != nil {
		return nil, fmt.Errorf("s3 tags: %w", err)
	}
	var tags map[string]string
	err := s.do(ctx, "tags", key, func() error {
		t, err := s.client.GetObjectTagging(ctx, s.bucket, key, minio.GetObjectTaggingOptions{})
		if err != nil {
			return err
		}
		tags = t.ToMap()
		return nil
	})
	if err != nil {
		return nil, mapErr("tags", key, err)
	}
	if len(tags) == 0 {
		return nil, nil
	}
	return tags, nil
}
