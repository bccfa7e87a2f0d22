package main

import "syscall"

// timeError is the adjtimex state of an unsynchronized clock.
const timeError = 5

// kernelClockSynced asks the kernel (adjtimex) whether the clock is kept
// synchronized.
func kernelClockSynced() (synced, known bool) {
	var t syscall.Timex
	state, err := syscall.Adjtimex(&t)
	if err != nil {
		return false, false
	}
	return state != timeError, true
}

// freeBytes returns the bytes available to unprivileged users on the file
// system of dir.
func freeBytes(dir string) (uint64, error) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(dir, &s); err != nil {
		return 0, err
	}
	return s.Bavail * uint64(s.Bsize), nil
}
