//go:build unix

package segmenter

import "syscall"

// allocMem maps n bytes of anonymous memory: pages become resident as they
// are written, and the Go collector neither scans nor counts them.
func allocMem(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n) // no mapping: the Go heap will do
	}
	return b[:n:n]
}

// freeMem unmaps r's memory. Memory that came from the Go heap (a failed
// mapping) is left to the collector.
func freeMem(r *region) {
	if r.b != nil {
		_ = syscall.Munmap(r.b) // EINVAL for Go heap memory: nothing to do
		r.b = nil
	}
}
