//go:build !(darwin || linux || openbsd)

package segmenter

import "os"

// writeVec writes bufs back to back at off, one positional write per
// buffer, and returns the bytes written.
func writeVec(f *os.File, _ int, off int64, bufs [][]byte) (int, error) {
	total := 0
	for _, b := range bufs {
		n, err := f.WriteAt(b, off)
		total += n
		off += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// fileFD returns -1: writeVec writes through the *os.File.
func fileFD(*os.File) int { return -1 }
