package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Entry is one key of a Bucket, as Get or Watch delivers it.
type Entry struct {
	Key     string
	Value   []byte
	Rev     uint64
	Deleted bool
}

// Bucket is a key-value bucket as the cluster uses it: NATS JetStream KV in
// production (NATSBucket), an in-memory fake in tests. Revisions grow with
// every write to the bucket.
type Bucket interface {
	// Get returns key's entry, or ErrNotFound.
	Get(ctx context.Context, key string) (Entry, error)

	// Create writes key when it has no value (or was deleted), else fails
	// with ErrWrongRevision. It returns the new revision.
	Create(ctx context.Context, key string, value []byte) (uint64, error)

	// Update writes key when its last revision is rev, else fails with
	// ErrWrongRevision. It returns the new revision.
	Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error)

	// Put writes key whatever its revision.
	Put(ctx context.Context, key string, value []byte) (uint64, error)

	// Delete removes key when its last revision is rev, or whatever its
	// revision when rev is 0.
	Delete(ctx context.Context, key string, rev uint64) error

	// Watch delivers every key's current entry, then an Entry with an
	// empty Key once they are all delivered, then every change, until ctx
	// ends or the watch fails; then the channel closes.
	Watch(ctx context.Context) (<-chan Entry, error)
}

// Errors of a Bucket.
var (
	// ErrNotFound is returned by Get for a key without a value.
	ErrNotFound = errors.New("key not found")

	// ErrWrongRevision is returned by a compare-and-set write when the key
	// changed since the revision given.
	ErrWrongRevision = errors.New("wrong revision")
)

// NATSBucket returns kv as a Bucket.
func NATSBucket(kv jetstream.KeyValue) Bucket { return natsBucket{kv: kv} }

type natsBucket struct{ kv jetstream.KeyValue }

var _ Bucket = natsBucket{}

func (b natsBucket) Get(ctx context.Context, key string) (Entry, error) {
	e, err := b.kv.Get(ctx, key)
	if err != nil {
		return Entry{}, mapNATSErr(err)
	}
	return entryOf(e), nil
}

func (b natsBucket) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	rev, err := b.kv.Create(ctx, key, value)
	return rev, mapNATSErr(err)
}

func (b natsBucket) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	next, err := b.kv.Update(ctx, key, value, rev)
	return next, mapNATSErr(err)
}

func (b natsBucket) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	rev, err := b.kv.Put(ctx, key, value)
	return rev, mapNATSErr(err)
}

func (b natsBucket) Delete(ctx context.Context, key string, rev uint64) error {
	if rev == 0 {
		return mapNATSErr(b.kv.Delete(ctx, key))
	}
	return mapNATSErr(b.kv.Delete(ctx, key, jetstream.LastRevision(rev)))
}

func (b natsBucket) Watch(ctx context.Context) (<-chan Entry, error) {
	w, err := b.kv.WatchAll(ctx)
	if err != nil {
		return nil, mapNATSErr(err)
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

// mapNATSErr wraps ErrNotFound and ErrWrongRevision around the matching
// JetStream errors.
func mapNATSErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, jetstream.ErrKeyExists):
		return fmt.Errorf("%w: %w", ErrWrongRevision, err)
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
		return fmt.Errorf("%w: %w", ErrWrongRevision, err)
	}
	return err
}

// ioTimeout bounds one request to a bucket made by the loop's helpers.
const ioTimeout = 2 * time.Second
