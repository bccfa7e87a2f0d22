//go:build !unix

package decodeproc

// crash aborts the process.
func crash() { panic("decoder process: test crash") }
