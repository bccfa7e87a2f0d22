package fs

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/vigia/vigia/storage"
)

// Get opens the object and returns length bytes from offset (to the end when
// length is negative).
func (f *FS) Get(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fs get %q: %w", key, err)
	}
	if err := storage.ValidateKey(key); err != nil {
		return nil, fmt.Errorf("fs get: %w", err)
	}
	if offset < 0 {
		return nil, fmt.Errorf("fs get %q: offset %d: %w", key, offset, storage.ErrInvalidRange)
	}
	file, err := os.Open(f.path(key))
	if err != nil {
		return nil, f.mapErr("get", key, err)
	}
	fi, err := file.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = os.ErrNotExist
	}
	if err != nil {
		_ = file.Close()
		return nil, f.mapErr("get", key, err)
	}
	size := fi.Size()
	if offset > 0 && offset >= size {
		_ = file.Close()
		return nil, fmt.Errorf("fs get %q: offset %d of %d bytes: %w", key, offset, size, storage.ErrInvalidRange)
	}
	if _, err := file.Seek(offset, io.SeekStart); err != nil {
		_ = file.Close()
		return nil, fmt.Errorf("fs get %q: %w", key, err)
	}
	n := size - offset
	if length >= 0 && length < n {
		n = length
	}
	return readCloser{Reader: io.LimitReader(file, n), Closer: file}, nil
}

// Stat describes the object, with the content type, metadata and tags of its sidecar.
func (f *FS) Stat(ctx context.Context, key string) (storage.Object, error) {
	if err := ctx.Err(); err != nil {
		return storage.Object{}, fmt.Errorf("fs stat %q: %w", key, err)
	}
	if err := storage.ValidateKey(key); err != nil {
		return storage.Object{}, fmt.Errorf("fs stat: %w", err)
	}
	fi, err := statFile(f.path(key))
	if err != nil {
		return storage.Object{}, f.mapErr("stat", key, err)
	}
	sc, err := f.readSidecar(key)
	if err != nil {
		return storage.Object{}, fmt.Errorf("fs stat %q: %w", key, err)
	}
	return storage.Object{
		Key:         key,
		Size:        fi.Size(),
		Modified:    fi.ModTime(),
		Metadata:    sc.Metadata,
		ContentType: storage.ContentTypeFor(key, sc.ContentType),
	}, nil
}

// Tags returns the tags given to the Put that wrote the object.
func (f *FS) Tags(ctx context.Context, key string) (map[string]string, error) {
	if _, err := f.Stat(ctx, key); err != nil {
		return nil, err
	}
	sc, err := f.readSidecar(key)
	if err != nil {
		return nil, fmt.Errorf("fs tags %q: %w", key, err)
	}
	return sc.Tags, nil
}

// mapErr wraps err, turning a missing file into storage.ErrNotFound.
func (f *FS) mapErr(op, key string, err error) error {
	if isNotFound(err) {
		return fmt.Errorf("fs %s %q: %w", op, key, storage.ErrNotFound)
	}
	return fmt.Errorf("fs %s %q: %w", op, key, err)
}

// readCloser joins a reader with the closer of its source.
type readCloser struct {
	io.Reader
	io.Closer
}
