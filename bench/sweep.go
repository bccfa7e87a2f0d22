package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/vigia/vigia/synth"
)

// The bar of a capacity sweep: a recorder holds N cameras when, in every
// phase at N, at least StoredTarget % of the frames were stored and the
// segment-to-storage latency p99 stayed under LatencyTarget.
const (
	StoredTarget  = 99.9
	LatencyTarget = 2 * time.Second
)

// SweepOptions configure a sweep: the same cameras recorded by Vigia and,
// optionally, by a peer recorder, at each camera count, phases alternated
// (Vigia, peer, Vigia, peer …) within one run.
type SweepOptions struct {
	// Options are the settings of every phase (Duration, Warmup, Backend,
	// Codec, Audio, Segment, Dir, MinIO, Log, Progress, CPUProfile: a
	// profile per Vigia phase, named FILE.N.RUN).
	Options

	// Counts are the camera counts, in the order run.
	// It defaults to Options.Cameras alone.
	Counts []int

	// Repeat is the phases of each recorder at each count.
	// It defaults to 2.
	Repeat int

	// MediaMTX is the MediaMTX binary recording the same cameras; "" for
	// Vigia alone. A recorder that misses the bar in every phase at a count
	// is not run at larger counts.
	MediaMTX string

	// PhaseCommand returns the command running the Vigia phase described
	// in a file (PhaseSpec as JSON) and printing its report as JSON.
	// It defaults to SelfPhaseCommand.
	PhaseCommand func(ctx context.Context, specFile string) (*exec.Cmd, error)
}

// Recorder names in a sweep.
const (
	RecorderVigia    = "vigia"
	RecorderMediaMTX = "mediamtx"
)

// SweepReport is the result of a sweep.
type SweepReport struct {
	Machine  Machine `json:"machine"`
	Codec    string  `json:"codec"`
	Audio    bool    `json:"audio"`
	Backend  string  `json:"backend"`
	SegmentS float64 `json:"segment_s"`
	WarmupS  float64 `json:"warmup_s"`
	WindowS  float64 `json:"window_s"`
	Repeat   int     `json:"repeat"`

	// Steps are the camera counts, in the order run.
	Steps []SweepStep `json:"steps"`

	// Capacity is, per recorder, the largest count at which every phase met
	// the bar (0: none).
	Capacity map[string]int `json:"capacity"`

	// Fleet holds the fleet's counters at the end of the sweep.
	Fleet *synth.FleetStats `json:"fleet,omitempty"`

	// PeerBaseRSSMiB is the peer's resident set with no camera, the base of
	// its per-camera memory.
	PeerBaseRSSMiB float64 `json:"peer_base_rss_mib,omitempty"`
}

// SweepStep is one camera count of a sweep.
type SweepStep struct {
	Cameras int           `json:"cameras"`
	Phases  []PhaseResult `json:"phases"`
}

// PhaseResult is one recorder's phase at one count.
type PhaseResult struct {
	Recorder string `json:"recorder"`
	Run      int    `json:"run"`

	// CPUPercentPerCamera is the recorder's CPU over the window per
	// camera, in % of one core; RecordingCPUPercentPerCamera leaves out
	// Vigia's thumbnails and motion (equal for the peer, which makes none).
	CPUPercentPerCamera          float64 `json:"cpu_percent_per_camera"`
	RecordingCPUPercentPerCamera float64 `json:"recording_cpu_percent_per_camera"`

	// RSSPerCameraMiB is the resident set's growth per camera; RSSEndMiB
	// the resident set at the end of the window.
	RSSPerCameraMiB float64 `json:"rss_per_camera_mib"`
	RSSEndMiB       float64 `json:"rss_end_mib"`

	// Frames are counted from the stored files.
	Frames FrameStats `json:"frames"`

	// LatencyP50Ms and LatencyP99Ms are over FullSegments segments: the
	// spool's segment end to object stored (Vigia), the segment's media end
	// to its file's last write (the peer, which writes in place).
	LatencyP50Ms float64 `json:"latency_p50_ms"`
	LatencyP99Ms float64 `json:"latency_p99_ms"`
	FullSegments int     `json:"full_segments"`

	// CamerasCPUPercentPerCamera is the fleet's CPU per camera read;
	// StorageCPUPercent MinIO's; MachineCPUPercent the whole machine's
	// (% of one core).
	CamerasCPUPercentPerCamera float64 `json:"cameras_cpu_percent_per_camera"`
	StorageCPUPercent          float64 `json:"storage_cpu_percent,omitempty"`
	MachineCPUPercent          float64 `json:"machine_cpu_percent"`

	// Pass says whether the phase met the bar; Err why it failed to run;
	// Skipped why it was not run.
	Pass    bool   `json:"pass"`
	Err     string `json:"error,omitempty"`
	Skipped string `json:"skipped,omitempty"`

	// Report is the Vigia phase's whole report.
	Report *Report `json:"report,omitempty"`
}

// meetsBar reports whether a phase that ran met the sweep's bar.
func (p PhaseResult) meetsBar() bool {
	return p.Err == "" && p.Skipped == "" && p.Frames.Expected > 0 &&
		100-p.Frames.LostPercent >= StoredTarget && p.FullSegments > 0 &&
		p.LatencyP99Ms < float64(LatencyTarget/time.Millisecond)
}

// sweep is a sweep in progress.
type sweep struct {
	o     SweepOptions
	dir   string
	fleet *synthProc
	base  float64 // the peer's resident set with no camera, MiB
}

// Sweep runs a sweep: one fleet serving the largest count of cameras, then
// at each count Repeat phases of each recorder, alternated.
func Sweep(ctx context.Context, so SweepOptions) (*SweepReport, error) {
	so.Options = so.Options.withDefaults()
	if len(so.Counts) == 0 {
		so.Counts = []int{so.Cameras}
	}
	if so.Repeat <= 0 {
		so.Repeat = 2
	}
	if so.PhaseCommand == nil {
		so.PhaseCommand = SelfPhaseCommand
	}
	maxN := slices.Max(so.Counts)
	check := so.Options
	check.Cameras = maxN
	if err := check.validate(); err != nil {
		return nil, err
	}
	if slices.Min(so.Counts) <= 0 {
		return nil, fmt.Errorf("%w: camera counts %v", ErrBadOptions, so.Counts)
	}
	if _, err := selfCPU(); err != nil {
		return nil, err
	}
	fps, err := cameraFPS(so.Codec)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(so.Dir, "vigia-sweep-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	sw := &sweep{o: so, dir: dir}
	fo := so.Options
	fo.Cameras, fo.Fleet, fo.Flap, fo.CameraURLs = maxN, true, 0, nil
	sw.progress("starting the fleet of %d cameras (%s) in a child process", maxN, so.Codec)
	if sw.fleet, err = startSynth(ctx, fo); err != nil {
		return nil, err
	}
	defer sw.fleet.stop(stopGrace)
	if so.MediaMTX != "" {
		if sw.base, err = mediamtxBaseRSS(ctx, so.MediaMTX, filepath.Join(dir, "mediamtx-base")); err != nil {
			return nil, err
		}
	}

	rep := &SweepReport{
		Machine: machine(), Codec: so.Codec, Audio: so.Audio, Backend: so.Backend, SegmentS: so.Segment.Seconds(),
		WarmupS: so.Warmup.Seconds(), WindowS: so.Duration.Seconds(), Repeat: so.Repeat,
		Capacity: map[string]int{RecorderVigia: 0}, PeerBaseRSSMiB: sw.base,
	}
	recorders := []string{RecorderVigia}
	if so.MediaMTX != "" {
		recorders = append(recorders, RecorderMediaMTX)
		rep.Capacity[RecorderMediaMTX] = 0
	}
	failedAt := map[string]int{}
	for _, n := range so.Counts {
		step := SweepStep{Cameras: n}
		for run := 1; run <= so.Repeat; run++ {
			for _, name := range recorders {
				var p PhaseResult
				switch {
				case failedAt[name] > 0:
					p = PhaseResult{Recorder: name, Run: run, Skipped: fmt.Sprintf("missed the bar at %d cameras", failedAt[name])}
				case name == RecorderVigia:
					p = sw.vigiaPhase(ctx, n, run)
				default:
					p = sw.mediamtxPhase(ctx, n, run, fps)
				}
				p.Pass = p.meetsBar()
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				sw.progress("%d cameras, %s run %d: %s", n, name, run, p.summary())
				step.Phases = append(step.Phases, p)
			}
		}
		for _, name := range recorders {
			ran, passed := 0, 0
			for _, p := range step.Phases {
				if p.Recorder == name && p.Skipped == "" {
					ran++
					if p.Pass {
						passed++
					}
				}
			}
			switch {
			case ran > 0 && passed == ran:
				rep.Capacity[name] = max(rep.Capacity[name], n)
			case ran > 0 && passed == 0 && failedAt[name] == 0:
				failedAt[name] = n
			}
		}
		rep.Steps = append(rep.Steps, step)
	}
	if st := sw.fleet.fleetStats(5 * time.Second); st != nil {
		rep.Fleet = st
	}
	return rep, nil
}

func (sw *sweep) progress(format string, args ...any) {
	fmt.Fprintf(sw.o.Progress, "sweep: "+format+"\n", args...)
}

// summary is a phase in one line.
func (p PhaseResult) summary() string {
	switch {
	case p.Skipped != "":
		return "skipped: " + p.Skipped
	case p.Err != "":
		return "failed: " + p.Err
	}
	return fmt.Sprintf("CPU %.3f %% per camera (recording %.3f %%), RSS %.2f MiB per camera, %.3f %% of frames stored, latency p99 %.0f ms, cameras %.4f %% per camera%s",
		p.CPUPercentPerCamera, p.RecordingCPUPercentPerCamera, p.RSSPerCameraMiB, 100-p.Frames.LostPercent,
		p.LatencyP99Ms, p.CamerasCPUPercentPerCamera, verdict(p.Pass))
}

// vigiaPhase runs Vigia on the first n cameras in a process of its own.
func (sw *sweep) vigiaPhase(ctx context.Context, n, run int) PhaseResult {
	res := PhaseResult{Recorder: RecorderVigia, Run: run}
	o := sw.o
	spec := PhaseSpec{
		Cameras: n, URLs: sw.fleet.urls[:n], PID: sw.fleet.pid(),
		Duration: o.Duration, Warmup: o.Warmup, Segment: o.Segment, Backend: o.Backend, Codec: o.Codec, Audio: o.Audio,
		Motion: o.Motion, SpoolSync: o.SpoolSync, MinIO: o.MinIO, Dir: sw.dir,
	}
	if o.CPUProfile != "" {
		spec.CPUProfile = fmt.Sprintf("%s.%d.%d", o.CPUProfile, n, run)
	}
	if o.MemProfile != "" {
		spec.MemProfile = fmt.Sprintf("%s.%d.%d", o.MemProfile, n, run)
	}
	file := filepath.Join(sw.dir, fmt.Sprintf("phase-%d-%d.json", n, run))
	b, err := json.Marshal(spec)
	if err == nil {
		err = os.WriteFile(file, b, 0o600)
	}
	if err != nil {
		res.Err = err.Error()
		return res
	}
	cmd, err := o.PhaseCommand(ctx, file)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = o.Progress
	setProcAttr(cmd)
	sw.progress("%d cameras, vigia run %d: recording in a process of its own", n, run)
	if err := cmd.Run(); err != nil {
		res.Err = fmt.Sprintf("vigia phase: %v", err)
		return res
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		res.Err = fmt.Sprintf("vigia phase report: %v", err)
		return res
	}
	v := rep.Vigia
	res.CPUPercentPerCamera, res.RecordingCPUPercentPerCamera = v.CPUPercentPerCamera, v.RecordingCPUPercentPerCamera
	res.RSSPerCameraMiB, res.RSSEndMiB = v.RSSPerCameraMiB, v.RSSEndMiB
	res.Frames = rep.Frames
	res.LatencyP50Ms, res.LatencyP99Ms, res.FullSegments = rep.Segments.LatencyP50Ms, rep.Segments.LatencyP99Ms, rep.Segments.StoredFull
	res.CamerasCPUPercentPerCamera = rep.Synth.CPUPercentPerCamera
	if rep.Storage != nil {
		res.StorageCPUPercent = rep.Storage.CPUPercent
	}
	if rep.MachineCPU != nil {
		res.MachineCPUPercent = rep.MachineCPU.CPUPercent
	}
	res.Report = &rep
	return res
}
