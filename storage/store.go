// Package storage defines the object store Vigia writes recordings,
// thumbnails, snapshots and videos to, and the key layout of those objects.
//
// Backends live in subpackages: storage/fs (a local directory) and
// storage/s3 (any S3-compatible service). The conformance suite in
// storage/storagetest checks that a backend keeps the Store contract.
package storage

import (
	"context"
	"io"
	"time"
)

// DefaultListLimit is the page size List uses when ListOptions.Limit is zero.
const DefaultListLimit = 1000

// Object describes a stored object.
type Object struct {
	// Key is the object's full key.
	Key string
	// Size is the object's length in bytes.
	Size int64
	// Modified is when the object was last written.
	Modified time.Time
	// Metadata holds the user metadata given to Put, with lower-case keys.
	// List leaves it nil; Stat fills it.
	Metadata map[string]string
	// ContentType is the object's media type. List leaves it empty; Stat fills it.
	ContentType string
}

// PutOptions are the optional attributes of a Put.
type PutOptions struct {
	// ContentType is the media type stored with the object.
	// It defaults to a type derived from the key's extension (see ContentTypeFor).
	ContentType string
	// Metadata is user metadata stored with the object. Keys are stored
	// lower-case and must match [a-z0-9-]; values must be printable ASCII.
	Metadata map[string]string
	// Tags are object tags (used by lifecycle rules on S3).
	Tags map[string]string
	// Immutable says the reader is a whole *os.File, at its start, whose
	// content never changes again (a finished spool segment). The fs backend
	// then stores it by a hard link when both are on one filesystem, copying
	// no byte; other backends read it as any reader.
	Immutable bool
}

// ListOptions select one page of a listing.
type ListOptions struct {
	// StartAfter lists only keys strictly after this one (lexical order).
	// Pass the previous page's Next to continue a listing.
	StartAfter string
	// Limit is the page size: the most objects plus common prefixes a page
	// holds. It defaults to DefaultListLimit; backends may cap it (S3: 1000).
	Limit int
	// Delimiter groups keys: keys whose remainder after the prefix contains
	// the delimiter are folded into one entry of ListPage.CommonPrefixes.
	// "/" lists one directory level. Empty lists every key below the prefix.
	Delimiter string
}

// ListPage is one page of a listing.
type ListPage struct {
	// Objects are the keys of the page, in lexical order.
	Objects []Object
	// CommonPrefixes are the folded groups of the page (see ListOptions.Delimiter),
	// in lexical order. The group StartAfter falls inside is never repeated.
	CommonPrefixes []string
	// Next is the StartAfter of the following page. It is "" when the listing
	// is known to be complete; a non-empty Next may lead to an empty page.
	Next string
}

// Store is an object store. Implementations are safe for concurrent use.
//
// Keys are validated with ValidateKey; a refused key wraps ErrInvalidKey.
type Store interface {
	// Put stores the object key with the content of r, replacing any object
	// with that key. size is the content length, or -1 when unknown. A Put
	// that fails leaves no partial object behind.
	Put(ctx context.Context, key string, r io.Reader, size int64, opts PutOptions) error
	// Get reads length bytes of the object from offset; a negative length
	// reads to the end. Missing objects wrap ErrNotFound; an offset at or
	// past the end of a non-empty object wraps ErrInvalidRange.
	Get(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
	// Stat describes the object. Missing objects wrap ErrNotFound.
	Stat(ctx context.Context, key string) (Object, error)
	// List returns one page of the keys that start with prefix, in lexical order.
	List(ctx context.Context, prefix string, opts ListOptions) (ListPage, error)
	// Delete removes the objects; keys that do not exist are not an error.
	Delete(ctx context.Context, keys []string) error
	// SignedURL returns a URL that reads the object without other
	// credentials until expiry has passed.
	SignedURL(ctx context.Context, key string, expiry time.Duration) (string, error)
	// Ping checks that the store is reachable and usable.
	Ping(ctx context.Context) error
	// Describe names the store for logs, e.g. "fs:/data/storage" or
	// "s3:http://127.0.0.1:9000/vigia". It never contains secrets.
	Describe() string
}

// TagReader is implemented by stores that can read back the tags of an object.
type TagReader interface {
	// Tags returns the tags stored with the object. Missing objects wrap ErrNotFound.
	Tags(ctx context.Context, key string) (map[string]string, error)
}
