package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/thumbs/decodeproc"
)

// Environment of the helper process that serves the synthetic cameras in
// tests (the test binary started again), standing in for `vigia synthcam`.
const (
	envSynthChild   = "VIGIA_BENCH_TEST_SYNTH"
	envSynthCameras = "VIGIA_BENCH_TEST_CAMERAS"
	envSynthCodec   = "VIGIA_BENCH_TEST_CODEC"
	envSynthAudio   = "VIGIA_BENCH_TEST_AUDIO"

	// The helper process standing in for `vigia bench --phase FILE`.
	envPhaseChild = "VIGIA_BENCH_TEST_PHASE"

	// The helper process standing in for `vigia nats`.
	envNATSChild  = "VIGIA_BENCH_TEST_NATS"
	envNATSListen = "VIGIA_BENCH_TEST_NATS_LISTEN"
	envNATSDir    = "VIGIA_BENCH_TEST_NATS_DIR"
)

func TestMain(m *testing.M) {
	// The recorder's decoder processes (Options.DecoderCommand defaults to
	// this executable's decode subcommand).
	if len(os.Args) > 1 && os.Args[1] == decodeproc.Subcommand {
		os.Exit(decodeproc.Main(os.Args[2:]))
	}
	if os.Getenv(envSynthChild) == "1" {
		os.Exit(serveSynthChild())
	}
	if os.Getenv(envNATSChild) == "1" {
		os.Exit(serveNATSChild())
	}
	if file := os.Getenv(envPhaseChild); file != "" {
		os.Exit(runPhaseChild(file))
	}
	os.Exit(m.Run())
}

// serveSynthChild does what `vigia synthcam --addr 127.0.0.1:0` does: serve
// cam-1 … cam-N, print their URLs, run until SIGTERM; with --fleet among
// its arguments, what `vigia synthcam --fleet` does.
func serveSynthChild() int {
	n, err := strconv.Atoi(os.Getenv(envSynthCameras))
	if err != nil {
		fmt.Fprintln(os.Stderr, "cameras:", err)
		return 2
	}
	if slices.Contains(os.Args, "--fleet") {
		return serveFleetChild(n)
	}
	var specs []synth.CameraSpec
	for i := 1; i <= n; i++ {
		codec := os.Getenv(envSynthCodec)
		if codec == "mixed" {
			codec = []string{synth.CodecH264, synth.CodecH265}[i%2]
		}
		audio := os.Getenv(envSynthAudio)
		if audio == "none" {
			audio = ""
		}
		specs = append(specs, synth.CameraSpec{Path: fmt.Sprintf("cam-%d", i), Codec: codec, AudioCodec: audio})
	}
	srv := synth.NewServer(synth.Config{Addr: "127.0.0.1:0", Cameras: specs})
	if err := srv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	for _, s := range specs {
		fmt.Println(srv.URL(s.Path))
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return 0
}

// serveFleetChild serves a fleet of n cameras, prints their URLs, then its
// counters at SIGUSR1 and at exit, as `vigia synthcam --fleet` does.
func serveFleetChild(n int) int {
	f := synth.NewFleet(synth.FleetConfig{Cameras: n, Codec: os.Getenv(envSynthCodec), Audio: os.Getenv(envSynthAudio) == synth.AudioAAC})
	if err := f.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	for i := 1; i <= n; i++ {
		fmt.Println(f.URL(i))
	}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	for {
		select {
		case <-usr1:
			b, _ := json.Marshal(f.Stats())
			fmt.Printf("%s%s\n", fleetStatsPrefix, b)
		case <-ctx.Done():
			return 0
		}
	}
}

// runPhaseChild does what `vigia bench --phase FILE` does.
func runPhaseChild(file string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := RunPhase(ctx, file, zap.NewNop(), os.Stderr, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testPhaseCommand starts the test binary as a sweep's Vigia phase.
func testPhaseCommand(ctx context.Context, file string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envPhaseChild+"="+file)
	return cmd, nil
}

// testSynthCommand starts the test binary as the synthetic cameras' process.
func testSynthCommand(ctx context.Context, cameras int, codec, audio string) (*exec.Cmd, error) {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envSynthChild+"=1",
		envSynthCameras+"="+strconv.Itoa(cameras),
		envSynthCodec+"="+codec,
		envSynthAudio+"="+audio,
	)
	return cmd, nil
}

// serveNATSChild does what `vigia nats` does: run the NATS server with the
// buckets and streams of docs/nats.md, say so, run until SIGTERM.
func serveNATSChild() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	b, err := bus.Open(ctx, bus.Options{Listen: os.Getenv(envNATSListen), StoreDir: os.Getenv(envNATSDir), Name: "bench-test-nats"}, zap.NewNop())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer b.Close()
	fmt.Println("vigia nats running:", b.ClientURL())
	<-ctx.Done()
	return 0
}

// testNATSCommand starts the test binary as the NATS process.
func testNATSCommand(listen, dir string) (*exec.Cmd, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envNATSChild+"=1", envNATSListen+"="+listen, envNATSDir+"="+dir)
	return cmd, nil
}
