package synth

import (
	"net"
	"path/filepath"
	"testing"
)

// TestStartKept: the synthetic cameras listen on the port of the previous
// start kept in the file; when another socket holds it, they take a new
// one and keep that.
func TestStartKept(t *testing.T) {
	file := filepath.Join(t.TempDir(), "synth_addr")
	start := func() string {
		t.Helper()
		srv, err := StartKept(Config{Cameras: []CameraSpec{{Path: "synth-1"}}}, file)
		if err != nil {
			t.Fatal(err)
		}
		addr := srv.Addr()
		srv.Close()
		return addr
	}
	first := start()
	if again := start(); again != first {
		t.Fatalf("second start on %s, first on %s", again, first)
	}
	ln, err := net.Listen("tcp", first)
	if err != nil {
		t.Fatal(err)
	}
	moved := start()
	ln.Close()
	if moved == first {
		t.Fatalf("started on %s, which another socket holds", moved)
	}
	if again := start(); again != moved {
		t.Fatalf("start after the move on %s, want the new port %s", again, moved)
	}
}
