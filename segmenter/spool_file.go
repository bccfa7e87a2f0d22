package segmenter

import (
	"bufio"
	"fmt"
	"os"
	"sync"
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
		return f.s.noSpace(fmt.Errorf("write spool file: %w", err))
	}
	if sync {
		if err := f.f.Sync(); err != nil {
			return f.s.noSpace(fmt.Errorf("sync spool file: %w", err))
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

// bufPool holds the buffered writers that fragments are written through.
var bufPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 32<<10) }}

// writeFragment appends one moof+mdat and fsyncs.
func (f *spoolFile) writeFragment(seq uint32, tracks []*fragTrack) error {
	bw := bufPool.Get().(*bufio.Writer)
	bw.Reset(f.f)
	n, err := writeFragment(bw, seq, tracks)
	bw.Reset(nil)
	bufPool.Put(bw)
	if n == 0 && err != nil {
		// what reached the file is unknown: count it from the file size
		if st, serr := f.f.Stat(); serr == nil {
			n = st.Size() - f.size
		}
	}
	f.size += n
	f.s.addBytes(n)
	if err != nil {
		return f.s.noSpace(fmt.Errorf("write spool file: %w", err))
	}
	if err := f.f.Sync(); err != nil {
		return f.s.noSpace(fmt.Errorf("sync spool file: %w", err))
	}
	return nil
}
