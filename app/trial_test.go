package app

import (
	"net"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/synth"
)

// TestSynthKeepsItsPort: the synthetic cameras listen on the port of the
// previous start kept under data_dir; when another socket holds it, they
// take a new one and keep that.
func TestSynthKeepsItsPort(t *testing.T) {
	a := &App{cfg: &config.Config{DataDir: t.TempDir()}, log: zap.NewNop()}
	start := func() string {
		t.Helper()
		srv, err := a.startSynthServer(synth.Config{Cameras: []synth.CameraSpec{{Path: "synth-1"}}})
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

// TestLocalTrialLogged: a node allowing cameras on private networks says
// so at start and names the key that turns it off.
func TestLocalTrialLogged(t *testing.T) {
	for _, allow := range []bool{true, false} {
		core, logs := observer.New(zap.InfoLevel)
		cfg := &config.Config{}
		cfg.Ingest.AllowPrivateNetworks = allow
		a := &App{cfg: cfg, mode: Mode{Name: "serve", Recorder: true, API: true}, log: zap.New(core)}
		a.logLocalTrial()
		said := false
		for _, e := range logs.All() {
			said = said || strings.Contains(e.Message, "ingest.allow_private_networks=false")
		}
		if said != allow {
			t.Errorf("allow_private_networks %v: logged %v: %v", allow, said, logs.All())
		}
	}
}
