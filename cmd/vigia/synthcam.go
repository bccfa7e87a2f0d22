package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"go.uber.org/zap"

	"github.com/vigia/vigia/synth"
)

// runSynthcam serves synthetic RTSP cameras until SIGINT or SIGTERM.
func runSynthcam(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("synthcam", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8554", "RTSP listen address")
	n := fs.Int("cameras", 4, "number of cameras (paths cam-1 … cam-N)")
	codec := fs.String("codec", "h264", "h264, h265 or mixed")
	audio := fs.Bool("audio", true, "add an AAC track")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, _ := zap.NewProduction()
	var specs []synth.CameraSpec
	for i := 1; i <= *n; i++ {
		c := *codec
		if c == "mixed" {
			c = []string{"h264", "h265"}[i%2]
		}
		specs = append(specs, synth.CameraSpec{Path: fmt.Sprintf("cam-%d", i), Codec: c, Audio: *audio})
	}
	srv := synth.NewServer(synth.Config{Addr: *addr, Cameras: specs, Log: log})
	if err := srv.Start(); err != nil {
		return err
	}
	defer srv.Close()
	for _, s := range specs {
		fmt.Fprintln(stdout, srv.URL(s.Path))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}
