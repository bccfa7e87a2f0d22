package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/vigia/vigia/bench"
	"github.com/vigia/vigia/logging"
)

// runBench implements `vigia bench`: it records synthetic cameras and prints
// the cost (docs/benchmarks.md). With --json the table goes to standard
// error and the JSON report to stdout.
func runBench(args []string, stdout io.Writer) error {
	o := bench.Defaults()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.IntVar(&o.Cameras, "cameras", o.Cameras, "synthetic cameras recorded")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "measured window")
	fs.DurationVar(&o.Warmup, "warmup", o.Warmup, "warm-up before the window, not measured")
	fs.DurationVar(&o.LiveWindow, "live", o.LiveWindow, "one viewer watches the first camera live this long after the window, for the live latency (0 skips)")
	fs.IntVar(&o.WebRTCViewers, "webrtc-viewers", o.WebRTCViewers, "after the live latency, measure WebRTC viewers: 1 and this many of the first camera, and one on each of this many cameras (0 skips)")
	fs.DurationVar(&o.WebRTCWindow, "webrtc-window", o.WebRTCWindow, "how long each set of WebRTC viewers watches")
	fs.DurationVar(&o.WebRTCBaseline, "webrtc-baseline", o.WebRTCBaseline, "the recorder's CPU with no viewer is read this long before each set of WebRTC viewers (0: the recording window's)")
	fs.BoolVar(&o.WebRTCPlainSockets, "webrtc-plain-sockets", o.WebRTCPlainSockets, "the WebRTC viewers' sockets never take the node's runs of datagrams whole (UDP_GRO), and the viewers of one camera are measured once")
	fs.StringVar(&o.Backend, "backend", o.Backend, "storage: fs (temporary directory) or s3 (a MinIO process, binary at $VIGIA_TOOLS/minio)")
	fs.StringVar(&o.Codec, "codec", o.Codec, "h264, h265 or mixed")
	audio := fs.String("audio", o.AudioCodec, "cameras' audio, recorded too: aac, g711 (µ-law; pcmu too), pcma, opus (G.711 and Opus are transcoded to AAC: the report gives the cost), or none")
	fs.DurationVar(&o.SampleEvery, "sample-every", o.SampleEvery, "sample RSS, goroutines and open files this often and report their growth (soak)")
	fs.BoolVar(&o.Discard, "discard", o.Discard, "delete each segment once stored and counted, so that a long run does not fill the disk")
	fs.Float64Var(&o.Flap, "flap", o.Flap, "fraction of cameras taken down for 10 s every 30 s (soak)")
	fs.BoolVar(&o.Motion, "motion", o.Motion, "run motion detection (the synthetic picture always moves: a worst case)")
	fs.StringVar(&o.SpoolSync, "spool-sync", o.SpoolSync, "recording.spool_sync of the recorder: group or file (default: the recorder's, group)")
	fs.DurationVar(&o.Segment, "segment", o.Segment, "recording.segment_duration")
	fs.IntVar(&o.FFmpegSample, "ffmpeg-sample", o.FFmpegSample, "cameras also recorded by FFmpeg for comparison (0 disables)")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the measured window to this file")
	fs.BoolVar(&o.NATSProcess, "nats-process", o.NATSProcess, "run NATS as its own process (vigia nats), as for a cluster node, instead of embedded in the recorder; reported apart")
	fs.StringVar(&o.MemProfile, "memprofile", "", "write a heap profile taken at the end of the window to this file")
	fs.StringVar(&o.Dir, "dir", "", "parent of the run's temporary directory (default: system temporary directory)")
	fs.BoolVar(&o.Fleet, "fleet", o.Fleet, "serve the cameras with the lean fleet (vigia synthcam --fleet) instead of the fault-injection cameras")
	var sf sweepFlags
	fs.StringVar(&sf.sweep, "sweep", "", "camera counts, e.g. 100,250,500: each recorded by Vigia (and --peer) in phases of their own; the capacity at the bar")
	fs.StringVar(&sf.peer, "peer", "", "mediamtx=PATH: MediaMTX records the same cameras, phases alternated with Vigia's")
	fs.IntVar(&sf.repeat, "repeat", 2, "with --sweep or --peer: phases of each recorder at each count")
	fs.StringVar(&sf.plot, "plot", "", "with --sweep or --peer: write the plot (SVG) to this file")
	fs.StringVar(&sf.markdown, "markdown", "", "with --sweep or --peer: write the table (Markdown) to this file")
	fs.StringVar(&sf.phase, "phase", "", "run the sweep phase described in this file and print its JSON report (used by --sweep)")
	maxGrowth := fs.Float64("max-growth", 0, "with --sample-every: exit non-zero when RSS, goroutines or open files grow faster than this many percent per hour (0: report only)")
	asJSON := fs.Bool("json", false, "print the report as JSON on stdout (the table goes to stderr)")
	level := fs.String("log-level", "warn", "recorder log level")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch *audio {
	case "none", "false":
		o.Audio = false
	case "true", "aac":
		o.Audio, o.AudioCodec = true, "aac"
	case "g711", "pcmu":
		o.Audio, o.AudioCodec = true, "pcmu"
	case "pcma", "opus":
		o.Audio, o.AudioCodec = true, *audio
	default:
		return fmt.Errorf("--audio %q: want aac, g711, pcmu, pcma, opus or none", *audio)
	}
	log, err := logging.New(*level, "console")
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	o.Log = log
	o.Progress = os.Stderr

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	switch {
	case sf.phase != "":
		return bench.RunPhase(ctx, sf.phase, log, os.Stderr, stdout)
	case sf.sweep != "" || sf.peer != "":
		return runSweep(ctx, o, sf, *asJSON, stdout)
	}
	rep, err := bench.Run(ctx, o)
	if err != nil {
		return err
	}
	if !*asJSON {
		if err := rep.WriteText(stdout); err != nil {
			return err
		}
	} else {
		if err := rep.WriteText(os.Stderr); err != nil {
			return err
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
	if *maxGrowth > 0 {
		return rep.Soak.Check(*maxGrowth)
	}
	return nil
}
