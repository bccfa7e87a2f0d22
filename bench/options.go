package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/thumbs/decodeproc"
)

// Options configure a benchmark run. Start from Defaults.
type Options struct {
	// Cameras is the number of synthetic cameras recorded.
	// It defaults to 100.
	Cameras int

	// Duration is the measured window.
	// It defaults to 60 seconds.
	Duration time.Duration

	// LiveWindow is how long one viewer watches the first camera live after
	// the measured window, for the live latency; 0 skips it.
	// It defaults to 20 seconds.
	LiveWindow time.Duration

	// WebRTCViewers, when set, measures WebRTC viewers after the live
	// latency: one viewer of the first camera, this many viewers of it, and
	// one viewer on each of this many cameras (at most Cameras), each for
	// WebRTCWindow, from a process of their own (ViewersCommand).
	WebRTCViewers int

	// WebRTCWindow is how long each set of WebRTC viewers watches.
	// It defaults to 20 seconds.
	WebRTCWindow time.Duration

	// WebRTCBaseline is how long the recorder's CPU is read with no viewer
	// right before each set of WebRTC viewers: the viewers' cost is the
	// CPU while they watch minus that. 0 takes the recording window's
	// instead.
	// It defaults to 10 seconds.
	WebRTCBaseline time.Duration

	// WebRTCPlainSockets measures the viewers with plain sockets only. By
	// default their sockets take the node's runs of datagrams whole
	// (UDP_GRO, RunWHEPViewers), and the viewers of one camera are also
	// measured once with plain sockets, for comparison.
	WebRTCPlainSockets bool

	// ViewersCommand returns the command running the WebRTC viewers of
	// urls for window (RunWHEPViewers's protocol), with gro their sockets
	// taking runs whole.
	// It defaults to SelfViewersCommand.
	ViewersCommand func(urls []string, window time.Duration, gro bool) (*exec.Cmd, error)

	// Discard deletes each segment from storage once it is stored and
	// counted, so that a long run does not fill the disk. The deletions
	// count in the recorder's CPU.
	Discard bool

	// Warmup runs before the measured window (connections, first keyframes,
	// first segments) and is excluded from the CPU figures.
	// It defaults to 10 seconds.
	Warmup time.Duration

	// Backend is the storage backend: "fs" (a temporary directory) or "s3"
	// (a MinIO process started for the run).
	// It defaults to "fs".
	Backend string

	// Codec of the synthetic cameras: "h264", "h265" or "mixed".
	// It defaults to "h264".
	Codec string

	// Audio gives every camera an audio track that is recorded too, as for
	// a camera whose sound is on: AAC (16 kHz mono) unless AudioCodec says
	// otherwise.
	Audio bool

	// AudioCodec is the cameras' audio when Audio is on: "aac", "pcmu"
	// (G.711 µ-law, 8 kHz), "pcma" (A-law) or "opus" (48 kHz). The recorder
	// transcodes the last three to AAC, and the report gives the cost.
	// It defaults to "aac".
	AudioCodec string

	// SampleEvery, when set, samples RSS, goroutines and open files during
	// the window and reports their growth (soak runs).
	SampleEvery time.Duration

	// Flap is the fraction of cameras the synthetic camera process takes
	// down for 10 s every 30 s (soak runs); 0 for none. The cameras go down
	// at multiples of 30 s on the wall clock, and the soak samples 25 s
	// into each cycle, 15 s after they came back.
	Flap float64

	// Motion runs motion detection on every camera. The synthetic picture
	// moves all the time, so motion confirms constantly: a worst case, off
	// by default so that the recording figures stand alone.
	Motion bool

	// SpoolSync is recording.spool_sync of the recorder: "group" or
	// "file". Empty keeps the recorder's default.
	SpoolSync string

	// Segment is the recording segment duration
	// (recording.segment_duration).
	// It defaults to 60 seconds.
	Segment time.Duration

	// FFmpegSample is the number of the same cameras also recorded by FFmpeg
	// processes for comparison; 0 disables the comparison. It is capped at
	// Cameras.
	// It defaults to 10.
	FFmpegSample int

	// FFmpeg is the ffmpeg binary.
	// It defaults to "ffmpeg" from PATH.
	FFmpeg string

	// NATSProcess runs NATS as a process of its own, as the recorder nodes
	// of a cluster use one, instead of embedded in the recorder: the
	// recorder's figures then leave out the NATS server (its JetStream
	// write caches grow with each stream's open block, up to the block
	// size, docs/benchmarks.md), which is reported apart.
	NATSProcess bool

	// NATSCommand returns the command running the NATS server with
	// NATSProcess: listening on listen, storing JetStream under dir, and
	// printing "vigia nats running" once its streams exist.
	// It defaults to SelfNATSCommand.
	NATSCommand func(listen, dir string) (*exec.Cmd, error)

	// MinIO is the MinIO server binary for the s3 backend.
	// It defaults to MinIOPath().
	MinIO string

	// CPUProfile, when set, is a file that receives a CPU profile of the
	// measured window.
	CPUProfile string

	// MemProfile, when set, is a file that receives a heap profile taken
	// at the end of the measured window.
	MemProfile string

	// Dir is the parent of the run's temporary directory (spool, fs storage,
	// MinIO data, FFmpeg output), removed at the end.
	// It defaults to the system temporary directory.
	Dir string

	// SynthCommand returns the command serving the synthetic cameras. The
	// command must serve rtsp://HOST:PORT/cam-1 … cam-N and print each URL on
	// its own line of standard output once it serves them.
	// It defaults to this executable's `synthcam` subcommand.
	// The audio is "none" or an AudioCodec.
	SynthCommand func(ctx context.Context, cameras int, codec, audio string) (*exec.Cmd, error)

	// DecoderCommand starts the recorder's decoder processes (thumbnails,
	// snapshots, motion detection).
	// It defaults to decodeproc.SelfCommand(): this executable's `decode`
	// subcommand.
	DecoderCommand []string

	// Fleet serves the cameras with the lean synthetic fleet (`vigia
	// synthcam --fleet`, docs/synth.md) instead of the synthetic cameras
	// made for fault injection: it costs a tenth as much, so that hundreds
	// of cameras fit on the machine with their recorder.
	Fleet bool

	// CameraURLs, when set, are the cameras to record, served by a process
	// the caller runs (CameraPID, whose CPU is measured as the synthetic
	// cameras'): no camera process is started. Cameras is their number.
	CameraURLs []string
	CameraPID  int

	// CountFiles counts the frames stored from the stored files (fs
	// backend), after the recorder has closed, with the same code that
	// counts another recorder's files in a comparison (docs/benchmarks.md).
	CountFiles bool

	// Progress, optional, receives one line per phase of the run.
	Progress io.Writer

	// Log receives the recorder's logs.
	// It defaults to a no-op logger.
	Log *zap.Logger
}

// Defaults returns the default options.
// The flapping cycle: a set of cameras goes down at every multiple of
// flapEvery on the wall clock, for flapDown; soak samples are taken
// flapSampleAt into a cycle.
const (
	flapEvery    = 30 * time.Second
	flapDown     = 10 * time.Second
	flapSampleAt = 25 * time.Second
)

func Defaults() Options {
	return Options{
		Cameras:        100,
		Duration:       60 * time.Second,
		LiveWindow:     20 * time.Second,
		WebRTCWindow:   20 * time.Second,
		WebRTCBaseline: 10 * time.Second,
		Warmup:         10 * time.Second,
		Backend:        "fs",
		Codec:          "h264",
		Audio:          true,
		AudioCodec:     "aac",
		Segment:        60 * time.Second,
		FFmpegSample:   10,
	}
}

// withDefaults fills the fields that have a default but no valid zero value.
func (o Options) withDefaults() Options {
	if o.Backend == "" {
		o.Backend = "fs"
	}
	if o.Codec == "" {
		o.Codec = "h264"
	}
	if o.AudioCodec == "" {
		o.AudioCodec = "aac"
	}
	if o.FFmpeg == "" {
		o.FFmpeg = "ffmpeg"
	}
	if o.MinIO == "" {
		o.MinIO = MinIOPath()
	}
	if o.NATSCommand == nil {
		o.NATSCommand = SelfNATSCommand
	}
	if o.SynthCommand == nil {
		o.SynthCommand = SelfSynthCommand
	}
	if o.WebRTCWindow <= 0 {
		o.WebRTCWindow = 20 * time.Second
	}
	if o.ViewersCommand == nil {
		o.ViewersCommand = SelfViewersCommand
	}
	if o.DecoderCommand == nil {
		o.DecoderCommand, _ = decodeproc.SelfCommand() // none: the report says imaging is unavailable
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	if o.FFmpegSample > o.Cameras {
		o.FFmpegSample = o.Cameras
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Cameras <= 0:
		return fmt.Errorf("%w: cameras %d (want at least 1)", ErrBadOptions, o.Cameras)
	case o.Duration <= 0:
		return fmt.Errorf("%w: duration %v (want more than 0)", ErrBadOptions, o.Duration)
	case o.Warmup < 0:
		return fmt.Errorf("%w: warmup %v (want 0 or more)", ErrBadOptions, o.Warmup)
	case o.Segment <= time.Second:
		return fmt.Errorf("%w: segment %v (want more than the 1 s fragment)", ErrBadOptions, o.Segment)
	case o.FFmpegSample < 0:
		return fmt.Errorf("%w: ffmpeg sample %d (want 0 or more)", ErrBadOptions, o.FFmpegSample)
	case o.Fleet && o.Flap > 0:
		return fmt.Errorf("%w: the fleet does not flap (use the synthetic cameras)", ErrBadOptions)
	case o.CameraURLs != nil && (len(o.CameraURLs) != o.Cameras || o.CameraPID <= 0):
		return fmt.Errorf("%w: %d camera URLs for %d cameras, served by process %d", ErrBadOptions, len(o.CameraURLs), o.Cameras, o.CameraPID)
	}
	switch o.Backend {
	case "fs", "s3":
	default:
		return fmt.Errorf("%w: backend %q (want fs or s3)", ErrBadOptions, o.Backend)
	}
	switch o.Codec {
	case "h264", "h265", "mixed":
	default:
		return fmt.Errorf("%w: codec %q (want h264, h265 or mixed)", ErrBadOptions, o.Codec)
	}
	if _, ok := audioCodecs[o.AudioCodec]; !ok {
		return fmt.Errorf("%w: audio codec %q (want aac, pcmu, pcma or opus)", ErrBadOptions, o.AudioCodec)
	}
	return nil
}

// SelfSynthCommand runs this executable's `synthcam` subcommand on a free
// port of 127.0.0.1 (the vigia binary's synthetic cameras).
func SelfSynthCommand(ctx context.Context, cameras int, codec, audio string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	return exec.CommandContext(ctx, exe, "synthcam", "--addr", "127.0.0.1:0",
		"--cameras", fmt.Sprint(cameras), "--codec", codec, "--audio="+audio), nil
}

// synthAudio is the audio of the synthetic cameras: "none" or a codec.
func (o Options) synthAudio() string {
	if !o.Audio {
		return "none"
	}
	return o.AudioCodec
}

// SelfNATSCommand runs this executable's `nats` subcommand.
func SelfNATSCommand(listen, dir string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	return exec.Command(exe, "nats", "--nats.listen", listen, "--nats.store_dir", dir, "--log.level", "warn"), nil
}
