package thumbs

import (
	"os"
	"testing"

	"github.com/vigia/vigia/thumbs/decodeproc"
)

// TestMain makes the test binary a decoder process when testDecoder's
// pool starts it.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == decodeproc.Subcommand {
		os.Exit(decodeproc.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// testDecoder is a pool of decoder processes running this test binary,
// closed at the end of the test.
func testDecoder(t testing.TB) *decodeproc.Pool {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := decodeproc.New(decodeproc.Config{Command: []string{exe, decodeproc.Subcommand}, Processes: 1})
	t.Cleanup(p.Close)
	return p
}
