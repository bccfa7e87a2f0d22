//go:build darwin || linux || openbsd

package segmenter

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// iovMax is the most buffers one pwritev takes (IOV_MAX on Linux and the
// BSDs).
const iovMax = 1024

// writeVec writes bufs back to back at off with pwritev, straight from the
// buffers, and returns the bytes written. It writes again after a short
// write. bufs may be changed.
func writeVec(_ *os.File, fd int, off int64, bufs [][]byte) (int, error) {
	total := 0
	for {
		for len(bufs) > 0 && len(bufs[0]) == 0 {
			bufs = bufs[1:]
		}
		if len(bufs) == 0 {
			return total, nil
		}
		n, err := unix.Pwritev(fd, bufs[:min(len(bufs), iovMax)], off)
		if n > 0 {
			total += n
			off += int64(n)
		}
		switch {
		case err == unix.EINTR:
		case err != nil:
			return total, err
		case n <= 0:
			return total, io.ErrShortWrite
		}
		for n > 0 {
			if n < len(bufs[0]) {
				bufs[0] = bufs[0][n:]
				break
			}
			n -= len(bufs[0])
			bufs = bufs[1:]
		}
	}
}

// fileFD returns the descriptor writeVec writes through.
func fileFD(f *os.File) int { return int(f.Fd()) }
