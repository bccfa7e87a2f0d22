package motion

import (
	"os"
	"testing"

	"github.com/vigia/vigia/thumbs/decodeproc"
)

// testDecoder is the tests' pool of decoder processes: this test binary,
// started again (TestMain).
var testDecoder *decodeproc.Pool

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == decodeproc.Subcommand {
		os.Exit(decodeproc.Main(os.Args[2:]))
	}
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	testDecoder = decodeproc.New(decodeproc.Config{Command: []string{exe, decodeproc.Subcommand}, Processes: 1})
	code := m.Run()
	testDecoder.Close()
	os.Exit(code)
}
