package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/vigia/vigia/synth"
)

// synthAddrFile, under data_dir, keeps the address of the synthetic
// cameras' RTSP server, so that their URLs stay the same across restarts.
const synthAddrFile = "synth_addr"

// startSynthServer starts srv's synthetic cameras on the address an
// earlier start kept under data_dir, or, the first time or when that port
// is taken now, on a free port of 127.0.0.1, which it keeps.
func (a *App) startSynthServer(cfg synth.Config) (*synth.Server, error) {
	file := filepath.Join(a.cfg.DataDir, synthAddrFile)
	var errKept error
	if b, err := os.ReadFile(file); err == nil && strings.TrimSpace(string(b)) != "" {
		cfg.Addr = strings.TrimSpace(string(b))
		srv := synth.NewServer(cfg)
		if errKept = srv.Start(); errKept == nil {
			return srv, nil
		}
		a.log.Warn("the synthetic cameras' kept address is not free: they move to a new port",
			zap.String("addr", cfg.Addr), zap.String("file", file), zap.Error(errKept))
	}
	cfg.Addr = "127.0.0.1:0"
	srv := synth.NewServer(cfg)
	if err := srv.Start(); err != nil {
		return nil, errors.Join(errKept, err)
	}
	if err := os.WriteFile(file, []byte(srv.Addr()+"\n"), 0o644); err != nil {
		a.log.Warn("the synthetic cameras' address is not kept: they get a new port at the next start",
			zap.String("file", file), zap.Error(err))
	}
	return srv, nil
}

// logLocalTrial says at start that cameras on this machine and its
// networks are allowed, and which key turns that off.
func (a *App) logLocalTrial() {
	if !a.cfg.Ingest.AllowPrivateNetworks || !(a.mode.Recorder || a.mode.API) {
		return
	}
	a.log.Warn("cameras on loopback, private and link-local addresses are allowed (a local trial); "+
		"in production set ingest.allow_private_networks=false (VIGIA_INGEST_ALLOW_PRIVATE_NETWORKS=false)",
		zap.Bool("ingest.allow_private_networks", true))
}
