package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// jsErrWrongLastSequence is the JetStream error code of an update whose
// expected revision is not the key's last one.
const jsErrWrongLastSequence = 10071

// bucket returns the open bucket name or an error naming it.
func (b *Bus) bucket(name string) (jetstream.KeyValue, error) {
	if b.closing.Load() {
		return nil, ErrClosed
	}
	kv := b.KV(name)
	if kv == nil {
		return nil, fmt.Errorf("%w: bucket %s not open", ErrTopology, name)
	}
	return kv, nil
}

// KVGet returns the value and revision of key in bucket. A missing or
// deleted key wraps ErrKeyNotFound.
func (b *Bus) KVGet(ctx context.Context, bucket, key string) ([]byte, uint64, error) {
	kv, err := b.bucket(bucket)
	if err != nil {
		return nil, 0, fmt.Errorf("kv get %s/%s: %w", bucket, key, err)
	}
	e, err := kv.Get(ctx, key)
	if err != nil {
		return nil, 0, fmt.Errorf("kv get %s/%s: %w", bucket, key, mapKVErr(err))
	}
	return e.Value(), e.Revision(), nil
}

// KVCreate stores value under key only if the key does not exist (or was
// deleted); otherwise it fails with ErrRevision. It returns the new revision.
func (b *Bus) KVCreate(ctx context.Context, bucket, key string, value []byte) (uint64, error) {
	kv, err := b.bucket(bucket)
	if err != nil {
		return 0, fmt.Errorf("kv create %s/%s: %w", bucket, key, err)
	}
	rev, err := kv.Create(ctx, key, value)
	if err != nil {
		return 0, fmt.Errorf("kv create %s/%s: %w", bucket, key, mapKVErr(err))
	}
	return rev, nil
}

// KVUpdate stores value under key only if the key's last revision is rev;
// otherwise it fails with ErrRevision. It returns the new revision.
func (b *Bus) KVUpdate(ctx context.Context, bucket, key string, value []byte, rev uint64) (uint64, error) {
	kv, err := b.bucket(bucket)
	if err != nil {
		return 0, fmt.Errorf("kv update %s/%s: %w", bucket, key, err)
	}
	next, err := kv.Update(ctx, key, value, rev)
	if err != nil {
		return 0, fmt.Errorf("kv update %s/%s: %w", bucket, key, mapKVErr(err))
	}
	return next, nil
}

// KVDelete deletes key from bucket; a missing key is not an error.
func (b *Bus) KVDelete(ctx context.Context, bucket, key string) error {
	kv, err := b.bucket(bucket)
	if err != nil {
		return fmt.Errorf("kv delete %s/%s: %w", bucket, key, err)
	}
	if err := kv.Delete(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("kv delete %s/%s: %w", bucket, key, err)
	}
	return nil
}

// KVKeys returns the keys of bucket (none for an empty bucket).
func (b *Bus) KVKeys(ctx context.Context, bucket string) ([]string, error) {
	kv, err := b.bucket(bucket)
	if err != nil {
		return nil, fmt.Errorf("kv keys %s: %w", bucket, err)
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kv keys %s: %w", bucket, err)
	}
	return keys, nil
}

// mapKVErr wraps ErrKeyNotFound and ErrRevision around the matching
// JetStream errors.
func mapKVErr(err error) error {
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return fmt.Errorf("%w: %w", ErrKeyNotFound, err)
	}
	if errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("%w: %w", ErrRevision, err)
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jsErrWrongLastSequence {
		return fmt.Errorf("%w: %w", ErrRevision, err)
	}
	return err
}
