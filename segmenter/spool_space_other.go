//go:build !linux

package segmenter

// freeBytes returns -1: free space is not checked on this system, a full
// disk is handled when a write fails.
func freeBytes(string) int64 { return -1 }
