package segmenter

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSpoolRoom: what the spool's files hold counts as room, and a spool
// directory not created yet is measured at its parent.
func TestSpoolRoom(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("free space is read on Linux only")
	}
	dir := t.TempDir()
	if SpoolRoom(filepath.Join(dir, "not", "yet")) <= 0 {
		t.Fatal("no room measured for a spool directory to be created")
	}
	if err := os.MkdirAll(filepath.Join(dir, "cam"), 0o750); err != nil {
		t.Fatal(err)
	}
	const held = 1 << 20
	if err := os.WriteFile(filepath.Join(dir, "cam", "1.mp4"), make([]byte, held), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cam", "1.json"), make([]byte, 10), 0o640); err != nil {
		t.Fatal(err)
	}
	if got := heldBytes(dir); got != held+10 {
		t.Errorf("spool files hold %d bytes, want %d", got, held+10)
	}
	if room := SpoolRoom(dir); room < held+10 {
		t.Errorf("room %d: less than the spooled files", room)
	}
}
