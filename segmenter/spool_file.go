package segmenter

import (
	"fmt"
	"os"
	"runtime"
)

// spoolFile is the spool file of the segment being written. Every write is
// positional: a fragment's header region is written after its samples.
type spoolFile struct {
	s     *Spool
	base  string
	path  string
	f     *os.File
	fd    int   // f's descriptor, for vectored writes
	size  int64 // bytes up to the end of the furthest write, counted in the spool
	dirty bool  // written since the last sync
}

// writeAt writes bufs back to back at off, from the buffers themselves (one
// vectored write where the system has one). The bytes by which the file
// grows are counted in the spool, also when the write fails part way.
func (f *spoolFile) writeAt(off int64, bufs ...[]byte) error {
	n, err := writeVec(f.f, f.fd, off, bufs)
	runtime.KeepAlive(f.f) // its finalizer would close fd
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

// sync makes what was written durable: an fsync of the file, or a group
// sync of the spool's filesystem (SpoolSync).
func (f *spoolFile) sync() error {
	if !f.dirty {
		return nil
	}
	var err error
	if f.s.group != nil {
		err = f.s.group.sync()
	} else {
		err = f.f.Sync()
	}
	if err != nil {
		return f.s.noSpace(fmt.Errorf("sync spool file: %w", err))
	}
	f.dirty = false
	return nil
}

// finish closes the file, records the final metadata and queues the segment
// for upload.
func (f *spoolFile) finish(meta Segment) error {
	if err := f.sync(); err != nil {
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

// abort removes the file.
func (f *spoolFile) abort() {
	_ = f.f.Close()
	removeSegmentFiles(f.path)
	f.s.addBytes(-f.size)
}
