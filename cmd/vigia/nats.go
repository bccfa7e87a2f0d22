package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/logging"
)

// runNATS runs the embedded NATS server with JetStream on its own, for a
// cluster of processes on one machine (make cluster) where no nats-server
// binary is installed. It listens on nats.listen, stores under
// nats.store_dir and requires nats.token when set; the buckets and streams
// of docs/nats.md are created before it reports ready.
func runNATS(args []string, stdout io.Writer) error {
	cfg, err := config.Load(args, os.Environ())
	if err != nil {
		return err
	}
	if cfg.NATS.URL != "" {
		return errors.New("nats.url is set: vigia nats runs a server, it does not connect to one")
	}
	format := cfg.Log.Format
	if format == "" {
		format = "json"
	}
	log, err := logging.New(cfg.Log.Level, format)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, err := bus.Open(startCtx, bus.Options{
		Listen: cfg.NATS.Listen, StoreDir: cfg.NATS.StoreDir, Token: cfg.NATS.Token, Name: "vigia-nats",
	}, log.With(zap.String("component", "bus")))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "vigia nats running: %s (JetStream in %s)\n", b.ClientURL(), cfg.NATS.StoreDir)
	<-ctx.Done()
	log.Info("shutting down")
	b.Close()
	return nil
}
