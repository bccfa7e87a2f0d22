//go:build decodeproc_testops

package decodeproc

// A binary built with the decodeproc_testops tag honours --test-ops: the
// end-to-end tests build vigia so, to crash, hang and starve its decoder
// processes.
func init() { testOps = (*server).test }
