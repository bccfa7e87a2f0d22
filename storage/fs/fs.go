// Package fs is a storage.Store kept in a local directory.
//
// Objects are files under the root, named by their keys. Writes are atomic:
// a temporary file in the target directory is written, synced and renamed
// over the key, then the directory is synced. Content type, user metadata and
// tags live in a sidecar tree under {root}/.meta/, which listings never show.
// Names starting with '.' are reserved for the store (keys cannot use them).
//
// A directory cannot hold both key "a" and key "a/b": the second Put fails.
package fs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

var _ storage.Store = (*FS)(nil)
var _ storage.TagReader = (*FS)(nil)

// metaDir is the sidecar tree below the root.
const metaDir = ".meta"

// tempPrefix starts the names of files being written.
const tempPrefix = ".tmp-"

// minSecretLen is the shortest signing secret New accepts.
const minSecretLen = 16

// Options configure an FS.
type Options struct {
	// BaseURL is where Handler is reachable, e.g. "https://node1.example/media".
	// SignedURL returns {BaseURL}/{key}?exp=..&sig=... It defaults to "",
	// which disables signed URLs.
	BaseURL string
	// Keys sign URLs (purpose sign.StorageURL). When nil, the keys of
	// Secret are used.
	Keys *sign.Keys
	// Secret derives the keys signing URLs when Keys is nil; at least 16
	// bytes when BaseURL is set without Keys.
	Secret []byte
	// Now returns the current time. It defaults to time.Now.
	Now func() time.Time
}

// FS is a storage.Store in a local directory.
type FS struct {
	root    string
	baseURL string
	keys    *sign.Keys
	now     func() time.Time
}

// New returns a store rooted at root, creating the directory if needed.
func New(root string, opts Options) (*FS, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("fs store root %q: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return nil, fmt.Errorf("fs store root: %w", err)
	}
	f := &FS{root: abs, baseURL: opts.BaseURL, now: opts.Now, keys: opts.Keys}
	if opts.BaseURL != "" && f.keys == nil {
		if len(opts.Secret) < minSecretLen {
			return nil, fmt.Errorf("fs store: %w", ErrWeakSecret)
		}
		if f.keys, err = sign.New(opts.Secret); err != nil {
			return nil, fmt.Errorf("fs store: %w", err)
		}
	}
	if f.now == nil {
		f.now = time.Now
	}
	return f, nil
}

// Root returns the absolute directory the store keeps objects in.
func (f *FS) Root() string { return f.root }

// Describe returns "fs:{root}".
func (f *FS) Describe() string { return "fs:" + f.root }

// Ping checks that the root is a directory the store can write to.
func (f *FS) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fs ping: %w", err)
	}
	tmp, err := os.CreateTemp(f.root, tempPrefix+"ping-*")
	if err != nil {
		return fmt.Errorf("fs ping: %w", err)
	}
	name := tmp.Name()
	cerr := tmp.Close()
	rerr := os.Remove(name)
	if cerr != nil {
		return fmt.Errorf("fs ping: %w", cerr)
	}
	if rerr != nil {
		return fmt.Errorf("fs ping: %w", rerr)
	}
	return nil
}

// path returns the file of a validated key.
func (f *FS) path(key string) string {
	return filepath.Join(f.root, filepath.FromSlash(key))
}

// sidecarPath returns the sidecar file of a validated key.
func (f *FS) sidecarPath(key string) string {
	return filepath.Join(f.root, metaDir, filepath.FromSlash(key)+".json")
}
