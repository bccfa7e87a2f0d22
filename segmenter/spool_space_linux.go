//go:build linux

package segmenter

import "syscall"

// freeBytes returns the bytes available to the process on the file system
// of dir, or -1 when unknown.
func freeBytes(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
