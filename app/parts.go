package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/synth"
)

// openStorage opens the configured backend and checks that it answers.
func (a *App) openStorage(ctx context.Context) error {
	cfg := a.cfg.Storage
	switch cfg.Backend {
	case "fs":
		st, err := fs.New(cfg.Path, fs.Options{BaseURL: strings.TrimRight(a.URL(), "/") + "/media", Keys: a.keys, Secret: a.secret})
		if err != nil {
			return fmt.Errorf("storage: %w", err)
		}
		a.store = st
		a.media = st.Handler()
	case "s3":
		st, err := s3.New(ctx, s3.Options{
			Endpoint: cfg.Endpoint, Bucket: cfg.Bucket, AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey,
			Region: cfg.Region, UseSSL: cfg.UseSSL, Checksum: cfg.Checksum, ObjectLocking: cfg.ObjectLock,
		}, a.log.With(zap.String("component", "s3")))
		if err != nil {
			return fmt.Errorf("storage: %w", err)
		}
		a.store = st
	default:
		return fmt.Errorf("storage.backend: unknown backend %q", cfg.Backend)
	}
	if err := a.store.Ping(ctx); err != nil {
		return fmt.Errorf("storage: %s unreachable: %w", a.store.Describe(), err)
	}
	return nil
}

// startSynth starts the synthetic cameras of `serve` and records them.
func (a *App) startSynth() error {
	n := a.cfg.Synth.Cameras
	var specs []synth.CameraSpec
	for i := 1; i <= n; i++ {
		specs = append(specs, synth.CameraSpec{Path: fmt.Sprintf("synth-%d", i), Codec: synth.CameraCodec(a.cfg.Synth.Codec, i), Audio: true})
	}
	srv, err := synth.StartKept(synth.Config{Cameras: specs, Log: a.log.With(zap.String("component", "synth"))}, filepath.Join(a.cfg.DataDir, synthAddrFile))
	if err != nil {
		return fmt.Errorf("synthetic cameras: %w", err)
	}
	a.synth = srv
	for _, s := range specs {
		a.static = append(a.static, ingest.Camera{ID: s.Path, URL: srv.URL(s.Path), Sound: true, Trusted: true})
	}
	return nil
}
