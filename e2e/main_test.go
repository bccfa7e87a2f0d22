package e2e

import (
	"os"
	"testing"

	"github.com/vigia/vigia/testenv"
)

// TestMain stops the shared MinIO server (testenv.SharedMinIO) after the
// tests and removes its data.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.CloseSharedMinIO()
	os.Exit(code)
}
