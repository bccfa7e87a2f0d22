package e2e

import (
	"os"
	"testing"

	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/testenv/headless"
)

// TestMain stops the shared MinIO server (testenv.SharedMinIO) and the
// shared browser (headless.Chromium) after the tests and removes their data.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.CloseSharedMinIO()
	headless.Close()
	os.Exit(code)
}
