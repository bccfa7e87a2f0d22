package cluster

import (
	"context"
	"time"

	"github.com/vigia/vigia/bus"
)

// Entry is one key of a Bucket, as Get or Watch delivers it.
type Entry = bus.Entry

// Bucket is a key-value bucket as the cluster uses it: bus.KVBucket in
// production, an in-memory fake in tests. Revisions grow with every write
// to the bucket.
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

var _ Bucket = bus.KVBucket{}

// Errors of a Bucket: those of package bus.
var (
	// ErrNotFound is returned by Get for a key without a value.
	ErrNotFound = bus.ErrKeyNotFound

	// ErrWrongRevision is returned by a compare-and-set write when the key
	// changed since the revision given.
	ErrWrongRevision = bus.ErrRevision
)

// ioTimeout bounds one request to a bucket made by the loop's helpers.
const ioTimeout = 2 * time.Second
