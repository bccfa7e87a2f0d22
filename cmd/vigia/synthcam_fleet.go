package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/vigia/vigia/synth"
)

// fleetStatsPrefix starts the line of standard output on which `vigia
// synthcam --fleet` prints its counters (synth.FleetStats as JSON), at
// SIGUSR1 and when it exits.
const fleetStatsPrefix = "fleet-stats "

// runFleet serves a lean synthetic fleet (synth.Fleet) until SIGINT or
// SIGTERM: one URL a line once it serves them, then its counters at
// SIGUSR1 and at exit.
func runFleet(addr string, cameras int, codec string, audio bool, stdout io.Writer) error {
	log, _ := zap.NewProduction()
	f := synth.NewFleet(synth.FleetConfig{Addr: addr, Cameras: cameras, Codec: codec, Audio: audio, Log: log})
	if err := f.Start(); err != nil {
		return err
	}
	defer f.Close()
	for i := 1; i <= cameras; i++ {
		fmt.Fprintln(stdout, f.URL(i))
	}
	printStats := func() {
		b, _ := json.Marshal(f.Stats())
		fmt.Fprintf(stdout, "%s%s\n", fleetStatsPrefix, b)
	}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	for {
		select {
		case <-usr1:
			printStats()
		case <-ctx.Done():
			printStats()
			return nil
		}
	}
}
