package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	vigiaBin  string
	buildErr  error
)

// VigiaBinary builds the vigia binary once per test process and returns its
// path. It is built with the decodeproc_testops tag, so that its decoder
// processes honour --test-ops; nothing else differs from the product.
func VigiaBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vigia-bin")
		if err != nil {
			buildErr = err
			return
		}
		vigiaBin = filepath.Join(dir, "vigia")
		out, err := exec.Command("go", "build", "-tags", "decodeproc_testops", "-o", vigiaBin, "github.com/vigia/vigia/cmd/vigia").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return vigiaBin
}
