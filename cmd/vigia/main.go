// Command vigia is Vigia's one binary: recorder nodes, the all-in-one
// server, synthetic cameras and the benchmark.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/logging"
	"github.com/vigia/vigia/thumbs/decodeproc"
)

const usage = `vigia: camera recording engine

Usage:
  vigia serve     [--config FILE] [--KEY VALUE ...]   everything in one process (embedded NATS, fs storage)
  vigia recorder  [--config FILE] [--KEY VALUE ...]   a recorder node (external NATS and S3 in production)
  vigia api       [--config FILE] [--KEY VALUE ...]   the service's HTTP interface (database, NATS, storage; no recorder)
  vigia synthcam  [--addr HOST:PORT] [--cameras N] [--codec h264|h265|mixed]
                                                       synthetic RTSP cameras
  vigia bench     [flags]                              records N synthetic cameras and prints the cost
  vigia whep-viewers --window D [--gro=false] < urls  WebRTC viewers of the WHEP addresses read on stdin (for the bench)
  vigia export    --config FILE --camera ID --from FROM --to TO --out FILE.mp4
                                                       one video from recordings in storage (FROM, TO: Unix ms or RFC 3339)
  vigia config check FILE                              validates a configuration file
  vigia cameras   [--config FILE] [--json]             cameras of the cluster with status and node (from NATS)
  vigia cameras discover [--range CIDR,...] [--port P] [--wait D] [--json] [--config FILE]
                                                       ONVIF cameras answering a WS-Discovery probe from this machine
  vigia doctor    [--config FILE] [--KEY VALUE ...]   checks FFmpeg, storage, NATS, clock and spool space
  vigia nats      [--config FILE] [--nats.listen H:P] a standalone NATS server with JetStream (no nats-server needed)
  vigia verify    --config FILE --camera ID --from FROM --to TO
                                                       checks stored segments against their hour manifests
  vigia verify    CLIP MANIFEST --key PUB.pem          checks a downloadable video against its signed manifest
  vigia probe     URL                                  exits 0 when URL answers 2xx (container health checks)
  vigia version

Configuration keys, their environment variables and flags: docs/config.md.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if args[0] == decodeproc.Subcommand {
		// Hidden: a decoder process of a node's pool, speaking the
		// decoder protocol on its standard input and output.
		return decodeproc.Main(args[1:])
	}
	var err error
	switch args[0] {
	case "serve":
		err = runNode(args[1:], app.Mode{Name: "serve", Recorder: true, Synth: true, Cluster: true, API: true, LocalAccess: true}, stdout)
	case "recorder":
		err = runNode(args[1:], app.Mode{Name: "recorder", Recorder: true, Cluster: true, RequireSecret: true}, stdout)
	case "api":
		err = runNode(args[1:], app.Mode{Name: "api", API: true}, stdout)
	case "synthcam":
		err = runSynthcam(args[1:], stdout)
	case "bench":
		err = runBench(args[1:], stdout)
	case "whep-viewers":
		err = runWHEPViewers(args[1:], os.Stdin, stdout)
	case "export":
		err = runExport(args[1:], stdout, stderr)
	case "verify":
		err = runVerify(args[1:], stdout)
	case "config":
		err = runConfig(args[1:], stdout)
	case "cameras":
		if len(args) > 1 && args[1] == "discover" {
			err = runDiscover(args[2:], stdout)
		} else {
			err = runCameras(args[1:], stdout)
		}
	case "doctor":
		err = runDoctor(args[1:], stdout)
	case "nats":
		err = runNATS(args[1:], stdout)
	case "probe":
		err = runProbe(args[1:], stdout)
	case "version":
		fmt.Fprintln(stdout, version())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "vigia: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "vigia %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// version returns the module version and VCS revision of the binary.
func version() string {
	v, rev := "devel", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = s.Value[:12]
			}
		}
		if rev != "" {
			return fmt.Sprintf("vigia %s (%s, %s)", v, rev, bi.GoVersion)
		}
		return fmt.Sprintf("vigia %s (%s)", v, bi.GoVersion)
	}
	return "vigia " + v
}

// runNode runs serve or recorder until SIGINT or SIGTERM.
func runNode(args []string, mode app.Mode, stdout io.Writer) error {
	cfg, err := config.Load(args, os.Environ())
	if err != nil {
		return err
	}
	format := cfg.Log.Format
	if format == "" {
		format = "json"
		if mode.Name == "serve" {
			format = "console"
		}
	}
	log, err := logging.New(cfg.Log.Level, format)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	log = log.With(zap.String("node", cfg.NodeID))

	if mode.DecoderCommand, err = decodeproc.SelfCommand(); err != nil {
		log.Warn("decoder processes cannot be started", zap.Error(err))
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	a, err := app.New(startCtx, cfg, mode, log)
	if err != nil {
		return err
	}
	if t := a.GeneratedOperatorToken(); t != "" {
		fmt.Fprintf(stdout, "operator token (generated and stored under data_dir; shown once): %s\n", t)
	}
	fmt.Fprintf(stdout, "vigia %s running: open %s/ (recordings page), %s/readyz, %s/metrics\n", mode.Name, a.URL(), a.URL(), a.URL())
	<-ctx.Done()
	stop()
	log.Info("shutting down")
	done := make(chan struct{})
	go func() {
		a.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		return errors.New("shutdown took longer than 30 s")
	}
	return nil
}

// runConfig implements `vigia config check FILE`.
func runConfig(args []string, stdout io.Writer) error {
	if len(args) != 2 || args[0] != "check" {
		return errors.New("usage: vigia config check FILE")
	}
	if _, err := config.Load([]string{"--config", args[1]}, os.Environ()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: ok\n", args[1])
	return nil
}
