//go:build vigia_testops

package decodeproc

// A binary built with the vigia_testops tag honours --test-ops: the
// end-to-end tests build vigia so, to crash, hang and starve its decoder
// processes.
func init() { testOps = (*server).test }
