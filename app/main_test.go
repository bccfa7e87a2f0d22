package app

import (
	"os"
	"testing"

	"github.com/vigia/vigia/thumbs/decodeproc"
)

// TestMain makes the test binary a decoder process when an App of the
// tests (testDecoderCommand) starts one.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == decodeproc.Subcommand {
		os.Exit(decodeproc.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// testDecoderCommand starts this test binary as a decoder process.
func testDecoderCommand(t testing.TB) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, decodeproc.Subcommand}
}
