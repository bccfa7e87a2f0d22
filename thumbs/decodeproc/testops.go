package decodeproc

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"time"
)

// hangNotice is what a process hanging for a test says on its standard
// error.
const hangNotice = "decoder process: hanging for a test"

// maxTestAlloc bounds what a test allocation asks for (make panics past
// the address space).
const maxTestAlloc = 1 << 40

// testOps runs test operations; nil in the product. It holds
// (*server).test in the package's tests (TestMain) and in a binary built
// with the decodeproc_testops tag (testops_tag.go), as the end-to-end
// tests build vigia. Nothing else refers to test, so the linker leaves
// the operations out of the product binary.
var testOps func(s *server, w *bufio.Writer, id uint32, op uint8, arg uint64) error

// test runs a test operation (the process was started with --test-ops):
// it aborts, hangs, allocates or describes its sandbox.
func (s *server) test(w *bufio.Writer, id uint32, op uint8, arg uint64) error {
	switch op {
	case testCrash:
		// As a decoder that hits a fault: the process dies mid-request.
		crash()
		for {
			time.Sleep(time.Hour)
		}
	case testHang:
		// Said on standard error, so that a test knows the request has
		// arrived.
		fmt.Fprintln(os.Stderr, hangNotice)
		for {
			time.Sleep(time.Hour)
		}
	case testAlloc:
		// Past RLIMIT_DATA the runtime cannot map the memory and the
		// process dies ("fatal error: runtime: out of memory").
		b := make([]byte, min(arg, maxTestAlloc))
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		runtime.KeepAlive(b)
		return writeFrame(w, framePong, id)
	}
	return writeFrame(w, frameInspect, id, []byte(inspect()))
}
