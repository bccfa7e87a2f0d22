package app

import (
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/vigia/vigia/config"
)

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
