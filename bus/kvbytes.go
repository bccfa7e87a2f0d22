package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// The one access layer to NATS KV: every read and write of a bucket by
// value and revision goes through KVBucket, and every JetStream KV error
// through mapKVErr (ErrKeyNotFound, ErrRevision).

// jsErrWrongLastSequence is the JetStream error code of an update whose
// expected revision is not the key's last one.
const jsErrWrongLastSequence = 10071

// Entry is one key of a bucket, as Get or Watch delivers it.
type Entry struct {
	Key     string
	Value   []byte
	Rev     uint64
	Deleted bool
}

// KVBucket is one key-value bucket of the Bus, by name. Revisions grow
// with every write to the bucket. Its zero value is not usable: get one
// from Bus.Bucket.
type KVBucket struct {
	b    *Bus
	name string
}

// Bucket returns bucket name. It is resolved at each call, so it may be
// taken before the bucket is open.
func (b *Bus) Bucket(name string) KVBucket { return KVBucket{b: b, name: name} }

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

// Get returns key's entry. A missing or deleted key wraps ErrKeyNotFound.
func (k KVBucket) Get(ctx context.Context, key string) (Entry, error) {
	kv, err := k.b.bucket(k.name)
	if err != nil {
		return Entry{}, fmt.Errorf("kv get %s/%s: %w", k.name, key, err)
	}
	e, err := kv.Get(ctx, key)
	if err != nil {
		return Entry{}, fmt.Errorf("kv get %s/%s: %w", k.name, key, mapKVErr(err))
	}
	return entryOf(e), nil
}

// Create writes key only if it has no value (or was deleted); otherwise it
// fails with ErrRevision. It returns the new revision.
func (k KVBucket) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	kv, err := k.b.bucket(k.name)
	if err != nil {
		return 0, fmt.Errorf("kv create %s/%s: %w", k.name, key, err)
	}
	rev, err := kv.Create(ctx, key, value)
	if err != nil {
		return 0, fmt.Errorf("kv create %s/%s: %w", k.name, key, mapKVErr(err))
	}
	return rev, nil
}

// Update writes key only if its last revision is rev; otherwise it fails
// with ErrRevision. It returns the new revision.
func (k KVBucket) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	kv, err := k.b.bucket(k.name)
	if err != nil {
		return 0, fmt.Errorf("kv update %s/%s: %w", k.name, key, err)
	}
	next, err := kv.Update(ctx, key, value, rev)
	if err != nil {
		return 0, fmt.Errorf("kv update %s/%s: %w", k.name, key, mapKVErr(err))
	}
	return next, nil
}

// Put writes key whatever its revision and returns the new revision.
func (k KVBucket) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	kv, err := k.b.bucket(k.name)
	if err != nil {
		return 0, fmt.Errorf("kv put %s/%s: %w", k.name, key, err)
	}
	rev, err := kv.Put(ctx, key, value)
	if err != nil {
		return 0, fmt.Errorf("kv put %s/%s: %w", k.name, key, mapKVErr(err))
	}
	return rev, nil
}

// Delete removes key when its last revision is rev (else ErrRevision), or
// whatever its revision when rev is 0.
func (k KVBucket) Delete(ctx context.Context, key string, rev uint64) error {
	kv, err := k.b.bucket(k.name)
	if err != nil {
		return fmt.Errorf("kv delete %s/%s: %w", k.name, key, err)
	}
	if rev == 0 {
		err = kv.Delete(ctx, key)
	} else {
		err = kv.Delete(ctx, key, jetstream.LastRevision(rev))
	}
	if err != nil {
		return fmt.Errorf("kv delete %s/%s: %w", k.name, key, mapKVErr(err))
	}
	return nil
}

// Keys returns the keys of the bucket (none for an empty bucket).
func (k KVBucket) Keys(ctx context.Context) ([]string, error) {
	kv, err := k.b.bucket(k.name)
	if err != nil {
		return nil, fmt.Errorf("kv keys %s: %w", k.name, err)
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kv keys %s: %w", k.name, mapKVErr(err))
	}
	return keys, nil
}

// Watch delivers every key's current entry, then an Entry with an empty
// Key once they are all delivered, then every change, until ctx ends or
// the watch fails; then the channel closes. Its goroutine exits with it.
func (k KVBucket) Watch(ctx context.Context) (<-chan Entry, error) {
	kv, err := k.b.bucket(k.name)
	if err != nil {
		return nil, fmt.Errorf("kv watch %s: %w", k.name, err)
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		return nil, fmt.Errorf("kv watch %s: %w", k.name, mapKVErr(err))
	}
	out := make(chan Entry, 64)
	go func() {
		defer close(out)
		defer func() { _ = w.Stop() }()
		for {
			var e Entry
			select {
			case <-ctx.Done():
				return
			case je, ok := <-w.Updates():
				if !ok {
					return
				}
				if je != nil {
					e = entryOf(je)
				}
			}
			select {
			case out <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func entryOf(e jetstream.KeyValueEntry) Entry {
	return Entry{Key: e.Key(), Value: e.Value(), Rev: e.Revision(), Deleted: e.Operation() != jetstream.KeyValuePut}
}

// KVGet returns the value and revision of key in bucket. A missing or
// deleted key wraps ErrKeyNotFound.
func (b *Bus) KVGet(ctx context.Context, bucket, key string) ([]byte, uint64, error) {
	e, err := b.Bucket(bucket).Get(ctx, key)
	return e.Value, e.Rev, err
}

// KVCreate stores value under key only if the key does not exist (or was
// deleted); otherwise it fails with ErrRevision. It returns the new revision.
func (b *Bus) KVCreate(ctx context.Context, bucket, key string, value []byte) (uint64, error) {
	return b.Bucket(bucket).Create(ctx, key, value)
}

// KVUpdate stores value under key only if the key's last revision is rev;
// otherwise it fails with ErrRevision. It returns the new revision.
func (b *Bus) KVUpdate(ctx context.Context, bucket, key string, value []byte, rev uint64) (uint64, error) {
	return b.Bucket(bucket).Update(ctx, key, value, rev)
}

// KVDelete deletes key from bucket; a missing key is not an error.
func (b *Bus) KVDelete(ctx context.Context, bucket, key string) error {
	if err := b.Bucket(bucket).Delete(ctx, key, 0); err != nil && !errors.Is(err, ErrKeyNotFound) {
		return err
	}
	return nil
}

// KVKeys returns the keys of bucket (none for an empty bucket).
func (b *Bus) KVKeys(ctx context.Context, bucket string) ([]string, error) {
	return b.Bucket(bucket).Keys(ctx)
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
