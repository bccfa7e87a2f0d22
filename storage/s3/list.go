package s3

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/vigia/vigia/storage"
)

// List returns one page with one ListObjectsV2 request of at most Limit
// (capped at 1000) entries. Only "/" is supported as Delimiter.
func (s *S3) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListPage, error) {
	if err := storage.ValidatePrefix(prefix); err != nil {
		return storage.ListPage{}, fmt.Errorf("s3 list: %w", err)
	}
	if opts.Delimiter != "" && opts.Delimiter != "/" {
		return storage.ListPage{}, fmt.Errorf("s3 list %q: delimiter %q: %w", prefix, opts.Delimiter, ErrDelimiter)
	}
	limit := opts.Limit
	if limit <= 0 {
		limit = storage.DefaultListLimit
	}
	limit = min(limit, maxListLimit)
	var raw []minio.ObjectInfo
	err := s.do(ctx, "list", prefix, func() error {
		raw = raw[:0]
		// The listing stops when this context ends; minio-go's iterator
		// returns once it is cancelled.
		lctx, cancel := context.WithCancel(ctx)
		defer cancel()
		// Each response holds its objects first and then its common
		// prefixes, each group sorted; MaxKeys = limit makes the first
		// response the whole page, sorted again below.
		for obj := range s.client.ListObjectsIter(lctx, s.bucket, minio.ListObjectsOptions{
			Prefix:     prefix,
			StartAfter: opts.StartAfter,
			MaxKeys:    limit,
			Recursive:  opts.Delimiter == "",
		}) {
			if obj.Err != nil {
				return obj.Err
			}
			raw = append(raw, obj)
			if len(raw) == limit {
				break
			}
		}
		return nil
	})
	if err != nil {
		return storage.ListPage{}, fmt.Errorf("s3 list %q: %w", prefix, err)
	}
	slices.SortFunc(raw, func(a, b minio.ObjectInfo) int { return strings.Compare(a.Key, b.Key) })
	var page storage.ListPage
	for _, info := range raw {
		key := info.Key
		if opts.Delimiter != "" && strings.Contains(key[len(prefix):], opts.Delimiter) {
			if strings.HasPrefix(opts.StartAfter, key) {
				continue // the group StartAfter is inside was returned already
			}
			page.CommonPrefixes = append(page.CommonPrefixes, key)
			continue
		}
		page.Objects = append(page.Objects, storage.Object{Key: key, Size: info.Size, Modified: info.LastModified})
	}
	if len(raw) == limit {
		page.Next = raw[len(raw)-1].Key
	}
	return page, nil
}

// Delete removes the keys with multi-object delete requests of up to 1000
// keys. Missing keys are not an error. Keys that fail transiently are retried.
func (s *S3) Delete(ctx context.Context, keys []string) error {
	for _, key := range keys {
		if err := storage.ValidateKey(key); err != nil {
			return fmt.Errorf("s3 delete: %w", err)
		}
	}
	if s.locking {
		return s.deleteVersions(ctx, keys)
	}
	remaining := keys
	err := s.do(ctx, "delete", fmt.Sprintf("%d keys", len(keys)), func() error {
		if len(remaining) == 0 {
			return nil
		}
		objects := func(yield func(minio.ObjectInfo) bool) {
			for _, k := range remaining {
				if !yield(minio.ObjectInfo{Key: k}) {
					return
				}
			}
		}
		results, err := s.client.RemoveObjectsWithIter(ctx, s.bucket, objects, minio.RemoveObjectsOptions{})
		if err != nil {
			return err
		}
		var failed []string
		var errs []error
		for res := range results {
			if res.Err == nil || errors.Is(mapErr("delete", res.ObjectName, res.Err), storage.ErrNotFound) {
				continue
			}
			failed = append(failed, res.ObjectName)
			if len(errs) < 3 {
				errs = append(errs, fmt.Errorf("%q: %w", res.ObjectName, res.Err))
			}
		}
		remaining = failed
		if len(failed) > 0 {
			return fmt.Errorf("%d keys not deleted: %w", len(failed), errors.Join(errs...))
		}
		return ctx.Err()
	})
	if err != nil {
		return fmt.Errorf("s3 delete: %w", err)
	}
	return nil
}
