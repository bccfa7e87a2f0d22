package player

import (
	"os"
	"testing"

	"github.com/vigia/vigia/testenv/headless"
)

// TestMain stops the shared browser (headless.Chromium) after the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	headless.Close()
	os.Exit(code)
}
