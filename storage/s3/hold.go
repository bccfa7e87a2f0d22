package s3

import (
	"context"
	"errors"
	"fmt"

	"github.com/minio/minio-go/v7"

	"github.com/vigia/vigia/storage"
)

var _ storage.LegalHolder = (*S3)(nil)

// SetLegalHold places or lifts the Object Lock legal hold of key's current
// version. The bucket must have Object Lock (Options.ObjectLocking).
func (s *S3) SetLegalHold(ctx context.Context, key string, on bool) error {
	if err := storage.ValidateKey(key); err != nil {
		return fmt.Errorf("s3 legal hold: %w", err)
	}
	if !s.locking {
		return fmt.Errorf("s3 legal hold %q: %w", key, storage.ErrNoObjectLock)
	}
	status := minio.LegalHoldDisabled
	if on {
		status = minio.LegalHoldEnabled
	}
	err := s.do(ctx, "legal hold", key, func() error {
		return s.client.PutObjectLegalHold(ctx, s.bucket, key, minio.PutObjectLegalHoldOptions{Status: &status})
	})
	if err != nil {
		return mapErr("legal hold", key, err)
	}
	return nil
}

// LegalHold reports whether key's current version is under a legal hold.
func (s *S3) LegalHold(ctx context.Context, key string) (bool, error) {
	if !s.locking {
		return false, nil
	}
	var st *minio.LegalHoldStatus
	err := s.do(ctx, "legal hold", key, func() error {
		var err error
		st, err = s.client.GetObjectLegalHold(ctx, s.bucket, key, minio.GetObjectLegalHoldOptions{})
		return err
	})
	var er minio.ErrorResponse
	if errors.As(err, &er) && er.Code == "NoSuchObjectLockConfiguration" {
		return false, nil
	}
	if err != nil {
		return false, mapErr("legal hold", key, err)
	}
	return st != nil && *st == minio.LegalHoldEnabled, nil
}

// deleteVersions deletes every version of the keys (a bucket with Object
// Lock keeps versions: a plain delete would only hide the data behind a
// delete marker). A version under a legal hold is refused by the server and
// its key reported in the error.
func (s *S3) deleteVersions(ctx context.Context, keys []string) error {
	var objs []minio.ObjectInfo
	for _, key := range keys {
		for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: key, WithVersions: true}) {
			if o.Err != nil {
				return mapErr("delete", key, o.Err)
			}
			if o.Key == key {
				objs = append(objs, minio.ObjectInfo{Key: o.Key, VersionID: o.VersionID})
			}
		}
	}
	if len(objs) == 0 {
		return nil
	}
	var errs []error
	for res := range s.client.RemoveObjects(ctx, s.bucket, sliceChan(objs), minio.RemoveObjectsOptions{}) {
		if res.Err != nil {
			errs = append(errs, fmt.Errorf("%q: %w", res.ObjectName, res.Err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("s3 delete: %w", errors.Join(errs...))
	}
	return nil
}

func sliceChan(objs []minio.ObjectInfo) <-chan minio.ObjectInfo {
	ch := make(chan minio.ObjectInfo, len(objs))
	for _, o := range objs {
		ch <- o
	}
	close(ch)
	return ch
}
