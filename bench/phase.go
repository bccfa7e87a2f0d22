package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"go.uber.org/zap"
)

// PhaseSpec is one Vigia phase of a sweep (SweepOptions): a benchmark run of
// its own process, recording cameras that the sweep's fleet serves, so
// that each phase starts from a fresh process whatever ran before it.
type PhaseSpec struct {
	Cameras    int           `json:"cameras"`
	URLs       []string      `json:"urls"`
	PID        int           `json:"pid"` // the process serving URLs
	Duration   time.Duration `json:"duration"`
	Warmup     time.Duration `json:"warmup"`
	Segment    time.Duration `json:"segment"`
	Backend    string        `json:"backend"`
	Codec      string        `json:"codec"`
	Audio      bool          `json:"audio"`
	Motion     bool          `json:"motion,omitempty"`
	SpoolSync  string        `json:"spool_sync,omitempty"`
	MinIO      string        `json:"minio,omitempty"`
	Dir        string        `json:"dir,omitempty"`
	CPUProfile string        `json:"cpu_profile,omitempty"`
	MemProfile string        `json:"mem_profile,omitempty"`
}

// options returns the run's options: no FFmpeg sample, no live viewer,
// frames counted from the stored files.
func (s PhaseSpec) options() Options {
	o := Defaults()
	o.Cameras, o.CameraURLs, o.CameraPID = s.Cameras, s.URLs, s.PID
	o.Duration, o.Warmup, o.Segment = s.Duration, s.Warmup, s.Segment
	o.Backend, o.Codec, o.Audio, o.Motion, o.SpoolSync = s.Backend, s.Codec, s.Audio, s.Motion, s.SpoolSync
	o.MinIO, o.Dir, o.CPUProfile, o.MemProfile = s.MinIO, s.Dir, s.CPUProfile, s.MemProfile
	o.FFmpegSample, o.LiveWindow = 0, 0
	o.Fleet, o.CountFiles = true, true
	return o
}

// RunPhase runs the phase described in file (PhaseSpec as JSON) and
// writes its report as JSON to w; progress and the recorder's logs go
// where log and progress say.
func RunPhase(ctx context.Context, file string, log *zap.Logger, progress, w io.Writer) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("phase: %w", err)
	}
	var spec PhaseSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("phase %s: %w", file, err)
	}
	o := spec.options()
	o.Log, o.Progress = log, progress
	rep, err := Run(ctx, o)
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(rep)
}

// SelfPhaseCommand runs the phase described in file as this executable's
// `bench` subcommand (`vigia bench --phase FILE`).
func SelfPhaseCommand(ctx context.Context, file string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	return exec.CommandContext(ctx, exe, "bench", "--phase", file), nil
}
