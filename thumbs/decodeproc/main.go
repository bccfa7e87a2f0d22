package decodeproc

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/vigia/vigia/thumbs/decoder"
)

// Subcommand is the vigia subcommand that runs a decoder process: the
// Pool's Command is the vigia binary followed by it.
const Subcommand = "decode"

// Main runs a decoder process on standard input and output: it enters its
// sandbox (see the package comment), says hello, answers requests until
// its standard input ends, and returns the exit status. args are its
// flags: --memory BYTES (RLIMIT_DATA; the Pool passes MemoryLimit) and
// --test-ops (tests only: accept operations that crash, hang or allocate;
// refused by a binary built without them).
func Main(args []string) int {
	return run(args, os.Stdin, os.Stdout, os.Stderr)
}

func run(args []string, in io.Reader, out, stderr io.Writer) int {
	fs := flag.NewFlagSet("vigia "+Subcommand, flag.ContinueOnError)
	fs.SetOutput(stderr)
	memory := fs.Int64("memory", DefaultMemoryLimit, "RLIMIT_DATA of the process in bytes (0: none)")
	wantTestOps := fs.Bool("test-ops", false, "accept test operations (crash, hang, allocate): tests only")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *memory < 0 {
		fmt.Fprintf(stderr, "usage: vigia %s [--memory BYTES] [--test-ops]\n", Subcommand)
		return 2
	}
	if *wantTestOps && testOps == nil {
		fmt.Fprintf(stderr, "vigia %s: --test-ops: this binary is built without test operations\n", Subcommand)
		return 2
	}
	os.Clearenv()
	// A crash says what happened (the signal, "out of memory") in a few
	// lines, which the pool logs, instead of every goroutine's stack.
	debug.SetTraceback("none")
	sb, err := enterSandbox(*memory)
	if err != nil {
		fmt.Fprintf(stderr, "vigia %s: sandbox: %v\n", Subcommand, err)
		return 1
	}
	if sb.seccompErr != nil {
		fmt.Fprintf(stderr, "vigia %s: running without a seccomp filter: %v\n", Subcommand, sb.seccompErr)
	}
	s := &server{
		hello: hello{decoding: decoder.Available(), seccomp: sb.seccompErr == nil, testOps: *wantTestOps, memory: *memory},
		dec:   newDecoders(),
	}
	if err := s.serve(in, out); err != nil {
		fmt.Fprintf(stderr, "vigia %s: %v\n", Subcommand, err)
		return 1
	}
	return 0
}

// SelfCommand returns the Command that runs this binary's Subcommand: the
// vigia binary's own decoder processes. On Linux it is /proc/self/exe,
// the very file this process runs even once an upgrade replaced it on
// disk, so processes started later speak the same protocol version.
func SelfCommand() ([]string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return []string{"/proc/self/exe", Subcommand}, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("own executable: %w", err)
	}
	return []string{exe, Subcommand}, nil
}
