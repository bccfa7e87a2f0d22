package synth

import (
	"errors"
	"os"
	"strings"

	"go.uber.org/zap"
)

// StartKept starts a server for cfg on the address an earlier start kept
// in file, so that its cameras' URLs stay the same across restarts; the
// first time, or when that address is taken now, on a free port of
// 127.0.0.1 (cfg.Addr is not used), which it keeps in file. A file that
// cannot be written is logged: the next start then gets a new port.
func StartKept(cfg Config, file string) (*Server, error) {
	log := cfg.Log
	if log == nil {
		log = zap.NewNop()
	}
	var errKept error
	if b, err := os.ReadFile(file); err == nil && strings.TrimSpace(string(b)) != "" {
		cfg.Addr = strings.TrimSpace(string(b))
		srv := NewServer(cfg)
		if errKept = srv.Start(); errKept == nil {
			return srv, nil
		}
		log.Warn("the synthetic cameras' kept address is not free: they move to a new port",
			zap.String("addr", cfg.Addr), zap.String("file", file), zap.Error(errKept))
	}
	cfg.Addr = "127.0.0.1:0"
	srv := NewServer(cfg)
	if err := srv.Start(); err != nil {
		return nil, errors.Join(errKept, err)
	}
	if err := os.WriteFile(file, []byte(srv.Addr()+"\n"), 0o644); err != nil {
		log.Warn("the synthetic cameras' address is not kept: they get a new port at the next start",
			zap.String("file", file), zap.Error(err))
	}
	return srv, nil
}
