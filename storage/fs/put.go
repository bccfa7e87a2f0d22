package fs

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/vigia/vigia/storage"
)

// copyBufSize is the buffer Put copies through.
const copyBufSize = 256 << 10

var copyBufs = sync.Pool{New: func() any { b := make([]byte, copyBufSize); return &b }}

// Put writes the object atomically: a reader that fails, a size that does not
// match or a cancelled context leave the previous object (or none) in place.
func (f *FS) Put(ctx context.Context, key string, r io.Reader, size int64, opts storage.PutOptions) error {
	if err := storage.ValidateKey(key); err != nil {
		return fmt.Errorf("fs put: %w", err)
	}
	md, err := storage.NormalizeMetadata(opts.Metadata)
	if err != nil {
		return fmt.Errorf("fs put %q: %w", key, err)
	}
	if err := storage.ValidateTags(opts.Tags); err != nil {
		return fmt.Errorf("fs put %q: %w", key, err)
	}
	dst := f.path(key)
	dir := filepath.Dir(dst)
	if opts.Immutable {
		if src, ok := r.(*os.File); ok {
			linked, err := f.putLink(key, src, size, md, opts)
			if linked || err != nil {
				return err
			}
		}
	}
	tmp, err := createTemp(dir)
	if err != nil {
		return fmt.Errorf("fs put %q: %w", key, err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()

	bp := copyBufs.Get().(*[]byte)
	n, err := io.CopyBuffer(writerOnly{tmp}, ctxReader{ctx: ctx, r: r}, *bp)
	copyBufs.Put(bp)
	if err != nil {
		return fmt.Errorf("fs put %q: write: %w", key, err)
	}
	if size >= 0 && n != size {
		return fmt.Errorf("fs put %q: read %d bytes, want %d: %w", key, n, size, storage.ErrSizeMismatch)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fs put %q: sync: %w", key, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("fs put %q: close: %w", key, err)
	}
	done = true
	return f.install(key, tmp.Name(), sidecar{ContentType: opts.ContentType, Metadata: md, Tags: opts.Tags})
}

// putLink stores src under key by a hard link. It reports false, with no
// error, when a link cannot be made (another filesystem, a reader not at the
// file's start, a size that differs) and Put should copy instead.
func (f *FS) putLink(key string, src *os.File, size int64, md map[string]string, opts storage.PutOptions) (bool, error) {
	st, err := src.Stat()
	if err != nil || !st.Mode().IsRegular() || (size >= 0 && st.Size() != size) {
		return false, nil
	}
	if off, err := src.Seek(0, io.SeekCurrent); err != nil || off != 0 {
		return false, nil
	}
	dst := f.path(key)
	dir := filepath.Dir(dst)
	tmp := filepath.Join(dir, fmt.Sprintf("%slink-%d-%d", tempPrefix, os.Getpid(), linkSeq.Add(1)))
	if err := mkdirLink(dir, src.Name(), tmp); err != nil {
		// Another filesystem, links not supported, or the directory
		// removed meanwhile by another process: the copy handles each.
		return false, nil
	}
	// The data must be durable before the object exists; the spool has
	// synced it already, so this costs nothing there.
	if err := src.Sync(); err != nil {
		_ = os.Remove(tmp)
		return true, fmt.Errorf("fs put %q: sync: %w", key, err)
	}
	return true, f.install(key, tmp, sidecar{ContentType: opts.ContentType, Metadata: md, Tags: opts.Tags})
}

// install makes the durable file tmp the object key: the sidecar first,
// then the rename, then the directory synced. tmp is removed on failure.
func (f *FS) install(key, tmp string, sc sidecar) error {
	if err := f.writeSidecar(key, sc); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("fs put %q: sidecar: %w", key, err)
	}
	dst := f.path(key)
	if err := os.Rename(tmp, dst); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("fs put %q: %w", key, err)
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return fmt.Errorf("fs put %q: sync dir: %w", key, err)
	}
	return nil
}

// mkdirLink makes dir and links src into it as tmp.
func mkdirLink(dir, src, tmp string) error {
	dirMu.RLock()
	defer dirMu.RUnlock()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	return os.Link(src, tmp)
}

// linkSeq numbers the temporary names of links.
var linkSeq atomic.Uint64

// ctxReader stops a copy once its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

// Read fails with the context's error once it ends.
func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// writerOnly hides the file's ReadFrom so the copy uses the pooled buffer.
type writerOnly struct{ w io.Writer }

// Write writes to the wrapped writer.
func (w writerOnly) Write(p []byte) (int, error) { return w.w.Write(p) }
