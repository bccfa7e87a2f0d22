package segmenter

import (
	"io"
	"os"
	"sync"
)

// Sizes of a spool file's write-behind buffer.
const (
	// spoolPage is the page of the page cache: a write that starts and
	// ends on page boundaries fills whole pages, without reading or
	// merging a partial one.
	spoolPage = 4096

	// spoolWriteChunk is the most that waits before a write goes out.
	// Written this way, 32 KiB page-aligned writes cost the kernel about
	// 0.3 ms of CPU per MB against 0.7 ms for a write per frame at the
	// frame's own offset (docs/recording.md); it is memory each camera
	// holds while it records.
	spoolWriteChunk = 32 << 10

	// maxGapFill is the largest gap between the end of the data and a
	// write past it that is filled with zeros (a fragment's header region,
	// written at the fragment's end); past it the buffer starts again.
	maxGapFill = 1 << 20
)

// writeBufPool holds the buffers of the open segments.
var writeBufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, spoolWriteChunk+spoolPage)
	return &b
}}

// zeros fills gaps.
var zeros [spoolPage]byte

// writeBuf is the write-behind buffer of a spool file: the bytes of the
// file from off on, the end of what was written, not yet in the file. off
// is a multiple of spoolPage, so the next write out starts on a page
// boundary: after a flush the partial last page stays in the buffer and
// is written again with what follows.
type writeBuf struct {
	buf *[]byte // nil until the first write, and once released
	off int64
	iov [][]byte // scratch of one write out
}

func pageFloor(n int64) int64 { return n &^ (spoolPage - 1) }

// take gets a buffer for data starting at off: it holds the bytes of
// off's page before off, read back from the file.
func (w *writeBuf) take(f *spoolFile, off int64) error {
	w.buf = writeBufPool.Get().(*[]byte)
	w.off = pageFloor(off)
	b := (*w.buf)[:off-w.off]
	*w.buf = b
	if len(b) == 0 {
		return nil
	}
	n, err := f.f.ReadAt(b, w.off)
	clear(b[n:]) // a hole, or past the end of the file: zeros
	if err == io.EOF {
		err = nil
	}
	return err
}

// release gives the buffer back; what waits in it is dropped.
func (w *writeBuf) release() {
	if w.buf != nil {
		*w.buf = (*w.buf)[:0]
		writeBufPool.Put(w.buf)
		w.buf = nil
	}
	clear(w.iov)
}

// end is the file offset after the last byte held.
func (w *writeBuf) end() int64 { return w.off + int64(len(*w.buf)) }

// write writes bufs back to back at off: bytes before the buffer go to the
// file, bytes over what waits replace them, bytes past the end wait. It
// returns the bytes taken.
func (w *writeBuf) write(f *spoolFile, off int64, bufs [][]byte) (int, error) {
	total := 0
	for _, b := range bufs {
		total += len(b)
	}
	if total == 0 {
		return 0, nil
	}
	if w.buf == nil {
		if err := w.take(f, off); err != nil {
			return 0, err
		}
	}
	taken := 0
	if off < w.off { // before what waits: written in place
		k := int(min(int64(total), w.off-off))
		head, rest := splitBufs(bufs, k)
		n, err := f.writeFile(off, head)
		taken += n
		if err != nil {
			return taken, err
		}
		off, bufs, total = off+int64(k), rest, total-k
	}
	if total == 0 {
		return taken, nil
	}
	if gap := off - w.end(); gap > maxGapFill { // far past the end: start again there
		if err := w.flush(f); err != nil {
			return taken, err
		}
		w.release()
		if err := w.take(f, off); err != nil {
			return taken, err
		}
	} else {
		for ; gap > 0; gap -= spoolPage {
			if _, err := w.append(f, [][]byte{zeros[:min(gap, spoolPage)]}); err != nil {
				return taken, err
			}
		}
	}
	if end := w.end(); off < end { // over what waits: replaced
		k := int(min(int64(total), end-off))
		head, rest := splitBufs(bufs, k)
		at := int(off - w.off)
		for _, x := range head {
			at += copy((*w.buf)[at:], x)
		}
		taken += k
		bufs, total = rest, total-k
	}
	if total == 0 {
		return taken, nil
	}
	n, err := w.append(f, bufs)
	return taken + n, err
}

// append adds bufs at the end. When what waits and bufs reach
// spoolWriteChunk, they go out in one write up to the last page boundary,
// straight from bufs; the rest, less than a page, waits.
func (w *writeBuf) append(f *spoolFile, bufs [][]byte) (int, error) {
	b := *w.buf
	total := 0
	for _, x := range bufs {
		total += len(x)
	}
	if len(b)+total < spoolWriteChunk {
		for _, x := range bufs {
			b = append(b, x...)
		}
		*w.buf = b
		return total, nil
	}
	cut := int(pageFloor(int64(len(b) + total)))
	need := cut - len(b)
	w.iov = append(w.iov[:0], b)
	tail, tailAt := len(bufs), 0 // the rest starts at bufs[tail][tailAt:]
	for i, x := range bufs {
		if need >= len(x) {
			w.iov = append(w.iov, x)
			need -= len(x)
			continue
		}
		if need > 0 {
			w.iov = append(w.iov, x[:need])
		}
		tail, tailAt = i, need
		break
	}
	n, err := f.writeFile(w.off, w.iov)
	clear(w.iov)
	if err != nil {
		// What reached the file stays counted; what waited is dropped
		// with the segment (the writer salvages its synced fragments).
		return max(n-len(b), 0), err
	}
	b = b[:0]
	if tail < len(bufs) {
		b = append(b, bufs[tail][tailAt:]...)
		for _, x := range bufs[tail+1:] {
			b = append(b, x...)
		}
	}
	*w.buf = b
	w.off += int64(cut)
	return total, nil
}

// flush writes what waits; the partial last page stays, to be written
// again with what follows.
func (w *writeBuf) flush(f *spoolFile) error {
	if w.buf == nil || len(*w.buf) == 0 {
		return nil
	}
	b := *w.buf
	w.iov = append(w.iov[:0], b)
	_, err := f.writeFile(w.off, w.iov)
	clear(w.iov)
	if err != nil {
		return err
	}
	keep := int(pageFloor(int64(len(b))))
	*w.buf = b[:copy(b, b[keep:])]
	w.off += int64(keep)
	return nil
}

// readAt reads at off from the file and, past the buffer's start, from
// the buffer.
func (w *writeBuf) readAt(file *os.File, p []byte, off int64) (int, error) {
	n := 0
	if w.buf == nil || off < w.off {
		k := len(p)
		if w.buf != nil {
			k = int(min(int64(k), w.off-off))
		}
		m, err := file.ReadAt(p[:k], off)
		n += m
		if err != nil || k == len(p) {
			return n, err
		}
		p, off = p[k:], off+int64(k)
	}
	i := off - w.off
	if i >= int64(len(*w.buf)) {
		return n, io.EOF
	}
	m := copy(p, (*w.buf)[i:])
	n += m
	if m < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// splitBufs splits bufs after k bytes into new lists (for the rare writes
// that do not only add at the end).
func splitBufs(bufs [][]byte, k int) (head, tail [][]byte) {
	for i, b := range bufs {
		if k == 0 {
			return head, bufs[i:]
		}
		if k < len(b) {
			head = append(head, b[:k])
			rest := append([][]byte{b[k:]}, bufs[i+1:]...)
			return head, rest
		}
		head = append(head, b)
		k -= len(b)
	}
	return head, nil
}
