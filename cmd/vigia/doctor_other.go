//go:build !linux

package main

import "errors"

// kernelClockSynced cannot tell outside Linux.
func kernelClockSynced() (synced, known bool) { return false, false }

// freeBytes is not measured outside Linux.
func freeBytes(string) (uint64, error) {
	return 0, errors.New("free space is measured on Linux only")
}
