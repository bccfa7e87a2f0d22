package segmenter

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// spoolFile is the spool file of the segment being written. Every write is
// positional: a fragment's header region is written after its samples.
//
// Writes go through a small write-behind buffer (spool_writebuf.go): what
// is written at the end of the file waits there until a page-aligned run
// of spoolWriteChunk bytes can go out in one write, and everything waiting
// is written before a sync. The file is read through ReadAt, which sees
// what waits: frames are read back (media.Stored) from other goroutines
// while the segment is open, so mu guards the buffer, and closed.
type spoolFile struct {
	s     *Spool
	base  string
	path  string
	f     *os.File
	fd    int   // f's descriptor, for vectored writes
	size  int64 // bytes up to the end of the furthest write, counted in the spool
	dirty bool  // written since the last sync
	// pending is the group sync round that makes the last fragment
	// durable, not yet waited for (0: none).
	pending uint64

	mu     sync.Mutex
	wb     writeBuf
	closed bool // ReadAt fails: the segment has ended
}

// writeAt writes bufs back to back at off. The bytes by which the file
// grows are counted in the spool, also when the write fails part way.
func (f *spoolFile) writeAt(off int64, bufs ...[]byte) error {
	f.mu.Lock()
	n, err := f.wb.write(f, off, bufs)
	f.mu.Unlock()
	f.dirty = true
	if end := off + int64(n); end > f.size {
		f.s.addBytes(end - f.size)
		f.size = end
	}
	if err != nil {
		return f.s.noSpace(fmt.Errorf("write spool file: %w", err))
	}
	return nil
}

// writeFile writes bufs back to back at off in the file itself, from the
// buffers themselves (one vectored write where the system has one).
func (f *spoolFile) writeFile(off int64, bufs [][]byte) (int, error) {
	n, err := writeVec(f.f, f.fd, off, bufs)
	runtime.KeepAlive(f.f) // its finalizer would close fd
	return n, err
}

// ReadAt reads what was written at off, waiting in the buffer or in the
// file; it fails once the segment has ended.
func (f *spoolFile) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, os.ErrClosed
	}
	return f.wb.readAt(f.f, p, off)
}

var _ io.ReaderAt = (*spoolFile)(nil)

// sync makes what was written durable: what waits in the buffer is
// written, then an fsync of the file, or a group sync of the spool's
// filesystem (SpoolSync). With a group sync, a fragment's end (wait false)
// asks for a round and goes on, having first waited for the round of the
// fragment before (long finished, a fragment later): the camera never
// waits on the disk while the next fragment arrives, and a fragment is
// durable within a round (defaultSyncEvery and the round's own time) of
// its end. A segment's end (wait true) waits for its round.
func (f *spoolFile) sync(wait bool) error {
	var err error
	if f.dirty {
		f.mu.Lock()
		err = f.wb.flush(f)
		f.mu.Unlock()
		if err == nil {
			if g := f.s.group; g != nil {
				// A fragment shorter than a round's pause (or frames fed
				// faster than real time) starts the round of the one
				// before now rather than waiting for it.
				if err = f.waitPending(); err == nil {
					f.pending = g.request(wait)
				}
			} else {
				err = f.f.Sync()
			}
		}
		if err == nil {
			f.dirty = false
		}
	}
	if err == nil && wait {
		err = f.waitPending()
	}
	if err != nil {
		return f.s.noSpace(fmt.Errorf("sync spool file: %w", err))
	}
	return nil
}

// end ends the file's life as an open segment: reads fail from now on and
// the buffer goes back to its pool (what still waits in it is dropped).
func (f *spoolFile) end() {
	f.mu.Lock()
	f.closed = true
	f.wb.release()
	f.mu.Unlock()
}

// waitPending waits for the group sync round of the last fragment, started
// now if it is still waiting for its time.
func (f *spoolFile) waitPending() error {
	if f.pending == 0 {
		return nil
	}
	g := f.s.group
	g.hurry(f.pending)
	err := g.wait(f.pending)
	f.pending = 0
	return err
}

// finish closes the file, records the final metadata and queues the segment
// for upload.
func (f *spoolFile) finish(meta Segment) error {
	err := f.sync(true)
	f.end()
	if err != nil {
		_ = f.f.Close()
		return err
	}
	if err := f.f.Close(); err != nil {
		return fmt.Errorf("close spool file: %w", err)
	}
	meta.Size = f.size
	meta.Path = f.base + ".mp4"
	if err := writeMeta(f.base+".json", meta); err != nil {
		_ = os.Remove(f.base + ".json.tmp")
		return f.s.noSpace(err)
	}
	if err := os.Rename(f.path, meta.Path); err != nil {
		return fmt.Errorf("rename spool file: %w", err)
	}
	f.s.enqueue(meta)
	return nil
}

// drop closes the file after a write error, keeping on disk what was
// written; what waits in the buffer is lost (recovery keeps the complete
// fragments, which were synced), and no longer counted in the spool.
func (f *spoolFile) drop() {
	f.end()
	if fi, err := os.Stat(f.path); err == nil && fi.Size() < f.size {
		f.s.addBytes(fi.Size() - f.size)
		f.size = fi.Size()
	}
	_ = f.f.Close()
}

// abort removes the file.
func (f *spoolFile) abort() {
	f.end()
	_ = f.f.Close()
	removeSegmentFiles(f.path)
	f.s.addBytes(-f.size)
}
