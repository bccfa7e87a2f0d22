package decodeproc

import (
	"bufio"
	"os"
	"testing"
)

// badSubcommand makes the test binary a decoder process that says hello,
// then answers every request with a result that does not parse.
const badSubcommand = "bad-decode"

// TestMain makes the test binary a decoder process when a Pool of the
// tests starts it (testCommand), or a broken one (badSubcommand). Its
// decoder processes honour --test-ops.
func TestMain(m *testing.M) {
	testOps = (*server).test
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case Subcommand:
			os.Exit(Main(os.Args[2:]))
		case badSubcommand:
			os.Exit(serveBadly())
		}
	}
	os.Exit(m.Run())
}

// serveBadly answers each request with a result frame of garbage.
func serveBadly() int {
	w := bufio.NewWriter(os.Stdout)
	if writeFrame(w, frameHello, 0, marshalHello(hello{decoding: true})) != nil {
		return 1
	}
	r := bufio.NewReader(os.Stdin)
	for {
		h, _, err := readFrame(r, nil)
		if err != nil {
			return 0
		}
		if writeFrame(w, frameResult, h.id, []byte("not a result")) != nil {
			return 1
		}
	}
}

// testCommand starts this test binary as a decoder process (sub: the
// subcommand, Subcommand or badSubcommand).
func testCommand(t testing.TB, sub string) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, sub}
}

// testPool is a pool of this test binary's decoder processes with test
// operations on, closed at the end of the test.
func testPool(t testing.TB, cfg Config) *Pool {
	if cfg.Command == nil {
		cfg.Command = testCommand(t, Subcommand)
	}
	cfg.TestOps = true
	p := New(cfg)
	t.Cleanup(p.Close)
	return p
}
