package segmenter

import (
	"fmt"
	"os"
)

// spoolFile is the spool file of the segment being written.
type spoolFile struct {
	s    *Spool
	base string
	path string
	f    *os.File
	size int64
}

// append writes b at the end of the file, fsyncing when sync is set.
func (f *spoolFile) append(b []byte, sync bool) error {
	n, err := f.f.Write(b)
	f.size += int64(n)
	f.s.addBytes(int64(n))
	if err != nil {
		return fmt.Errorf("write spool file: %w", err)
	}
	if sync {
		if err := f.f.Sync(); err != nil {
			return fmt.Errorf("sync spool file: %w", err)
		}
	}
	return nil
}

// finish closes the file, records the final metadata and queues the segment
// for upload.
func (f *spoolFile) finish(meta Segment) error {
	if err := f.f.Sync(); err != nil {
		_ = f.f.Close()
		return fmt.Errorf("sync spool file: %w", err)
	}
	if err := f.f.Close(); err != nil {
		return fmt.Errorf("close spool file: %w", err)
	}
	meta.Size = f.size
	meta.Path = f.base + ".mp4"
	if err := writeMeta(f.base+".json", meta); err != nil {
		return err
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
