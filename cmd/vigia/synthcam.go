package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/synth"
)

// runSynthcam serves synthetic RTSP cameras until SIGINT or SIGTERM.
func runSynthcam(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("synthcam", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8554", "RTSP listen address")
	n := fs.Int("cameras", 4, "number of cameras (paths cam-1 … cam-N)")
	codec := fs.String("codec", "h264", "h264, h265 or mixed")
	audio := fs.String("audio", synth.AudioAAC, "audio track: aac, pcmu (or g711), pcma, opus or none")
	flapFraction := fs.Float64("flap-fraction", 0, "fraction of the cameras that go down now and then (0 = none)")
	flapEvery := fs.Duration("flap-every", 30*time.Second, "how often a new set of cameras goes down")
	flapDown := fs.Duration("flap-down", 10*time.Second, "how long a flapping camera stays down")
	fleet := fs.Bool("fleet", false, "a lean fleet for load (docs/synth.md): no faults, its counters printed at SIGUSR1 and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *fleet {
		switch *audio {
		case synth.AudioAAC, "none":
		default:
			return fmt.Errorf("synthcam: the fleet sends AAC or no audio, not %q", *audio)
		}
		return runFleet(*addr, *n, *codec, *audio == synth.AudioAAC, stdout)
	}
	audioCodec, err := synthAudio(*audio)
	if err != nil {
		return err
	}
	log, _ := zap.NewProduction()
	var specs []synth.CameraSpec
	for i := 1; i <= *n; i++ {
		specs = append(specs, synth.CameraSpec{Path: fmt.Sprintf("cam-%d", i), Codec: synth.CameraCodec(*codec, i), AudioCodec: audioCodec})
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
	if *flapFraction > 0 {
		go flap(ctx, srv, specs, *flapFraction, *flapEvery, *flapDown)
	}
	<-ctx.Done()
	return nil
}

// synthAudio maps the --audio flag to a synth audio codec, "" for none
// (true and false are taken for aac and none).
func synthAudio(v string) (string, error) {
	switch v {
	case "none", "false", "":
		return "", nil
	case "true", synth.AudioAAC:
		return synth.AudioAAC, nil
	case "g711", synth.AudioPCMU:
		return synth.AudioPCMU, nil
	case synth.AudioPCMA, synth.AudioOpus:
		return v, nil
	}
	return "", fmt.Errorf("--audio %q: want aac, pcmu, g711, pcma, opus or none", v)
}

// flap takes a random fraction of the cameras down for down, at every
// multiple of every on the wall clock, until ctx ends: cameras that come and
// go, for soak runs. Going by the wall clock lets another process (vigia
// bench) sample at a known phase of the cycle.
func flap(ctx context.Context, srv *synth.Server, specs []synth.CameraSpec, fraction float64, every, down time.Duration) {
	n := int(float64(len(specs))*fraction + 0.5)
	if n < 1 {
		n = 1
	}
	for {
		now := time.Now()
		wait := time.NewTimer(now.Truncate(every).Add(every).Sub(now))
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		}
		var paths []string
		for _, i := range rand.Perm(len(specs))[:n] {
			paths = append(paths, specs[i].Path)
			_ = srv.SetDown(specs[i].Path, true)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(down):
		}
		for _, p := range paths {
			_ = srv.SetDown(p, false)
		}
	}
}
