package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// runTimeout bounds a whole small run in the tests.
const runTimeout = 2 * time.Minute

func TestRunFSWithFFmpegSample(t *testing.T) {
	o := Options{
		Cameras: 3, Duration: 6 * time.Second, Warmup: 2 * time.Second, LiveWindow: 4 * time.Second, Backend: "fs", Codec: "mixed",
		Audio: true, Segment: 2 * time.Second, FFmpegSample: 1, Dir: t.TempDir(),
		SynthCommand: testSynthCommand, Log: zaptest.NewLogger(t), Progress: testWriter{t},
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	checkCommon(t, rep, o)

	f := rep.FFmpeg
	if f == nil {
		t.Fatal("no ffmpeg report with FFmpegSample 1")
	}
	if f.Processes != 1 || f.Alive != 1 {
		t.Errorf("ffmpeg processes %d, measured %d; want 1 and 1 (errors: %q)", f.Processes, f.Alive, f.Errors)
	}
	if f.Usage.CPUSeconds <= 0 || f.Usage.CPUPercentPerCamera <= 0 {
		t.Errorf("ffmpeg CPU not measured: %+v", f.Usage)
	}
	if f.Usage.RSSPerCameraMiB <= 0 {
		t.Errorf("ffmpeg RSS not measured: %+v", f.Usage)
	}
	if f.Files == 0 || f.Bytes == 0 {
		t.Errorf("ffmpeg wrote %d files, %d bytes; want some", f.Files, f.Bytes)
	}
	want := rep.Vigia.CPUPercentPerCamera / f.Usage.CPUPercentPerCamera
	if f.Ratio != want {
		t.Errorf("ratio %v, want vigia/ffmpeg = %v", f.Ratio, want)
	}

	// The machine's busy time holds the recorder's and its children's.
	if m := rep.MachineCPU; m == nil || m.CPUPercent <= 0 || m.OtherCPUPercent < 0 {
		t.Errorf("machine CPU not measured: %+v", m)
	} else if m.CPUPercent+2 < rep.Vigia.CPUPercent+rep.Synth.CPUPercent {
		t.Errorf("machine CPU %.1f %% below the recorder's %.1f %% and the cameras' %.1f %%", m.CPUPercent, rep.Vigia.CPUPercent, rep.Synth.CPUPercent)
	}

	if l := rep.Live; l == nil || l.Parts == 0 || l.Err != "" || l.WindowS != 4 {
		t.Errorf("live latency not measured in the live window: %+v", l)
	}

	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"go1.", "vigia CPU", "vigia RSS", "vigia memory", "latency", "live latency", "live viewer cost", "frames lost", "ffmpeg CPU", "vigia / ffmpeg CPU", "3 cameras mixed + AAC"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, text.String())
		}
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Frames.Expected != rep.Frames.Expected || back.FFmpeg == nil || back.FFmpeg.Ratio != f.Ratio {
		t.Errorf("JSON round trip lost fields: %s", b)
	}
	entries, err := os.ReadDir(o.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("run left %d entries in its directory, want none", len(entries))
	}
}

// TestRunS3WithProfile runs with MinIO and with NATS as processes of their
// own, and takes CPU and heap profiles with the memory profiler off at the
// start, as the vigia binary runs. Its window holds at least one whole
// 2 s segment of each camera after the staggered first one, however
// loaded the machine.
func TestRunS3WithProfile(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	heap := filepath.Join(t.TempDir(), "heap.pprof")
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 0
	t.Cleanup(func() { runtime.MemProfileRate = rate })
	o := Options{
		Cameras: 2, Duration: 6 * time.Second, Warmup: time.Second, Backend: "s3", Codec: "h264",
		Segment: 2 * time.Second, CPUProfile: prof, MemProfile: heap, Dir: t.TempDir(), Discard: true,
		NATSProcess: true, NATSCommand: testNATSCommand, SynthCommand: testSynthCommand, Log: zaptest.NewLogger(t), Progress: testWriter{t},
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	rep, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	checkCommon(t, rep, o)
	if rep.Storage == nil || rep.Storage.CPUSeconds <= 0 || rep.Storage.RSSEndMiB <= 0 {
		t.Errorf("minio usage not measured: %+v", rep.Storage)
	}
	// The NATS process was measured. Its CPU time is not checked: 2
	// cameras' notices over 6 s can take less than the 10 ms clock tick
	// the kernel counts in, and read zero.
	if rep.NATS == nil || rep.NATS.RSSEndMiB <= 0 {
		t.Errorf("nats process usage not measured: %+v", rep.NATS)
	}
	if rep.FFmpeg != nil {
		t.Errorf("ffmpeg report with FFmpegSample 0: %+v", rep.FFmpeg)
	}
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("cpu profile %s not written: %v", prof, err)
	}
	for _, p := range []string{heap + ".start", heap} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("heap profile %s not written: %v", p, err)
		}
	}
	if runtime.MemProfileRate != defaultMemProfileRate {
		t.Errorf("MemProfileRate = %d after a run with a heap profile, want %d", runtime.MemProfileRate, defaultMemProfileRate)
	}
	if n, _ := runtime.MemProfile(nil, true); n == 0 {
		t.Error("the heap profile holds no records: the memory profiler was not turned on")
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	base := Defaults()
	base.SynthCommand = testSynthCommand
	tests := []struct {
		name string
		edit func(*Options)
	}{
		{"no cameras", func(o *Options) { o.Cameras = 0 }},
		{"no duration", func(o *Options) { o.Duration = 0 }},
		{"negative warmup", func(o *Options) { o.Warmup = -time.Second }},
		{"segment not above fragment", func(o *Options) { o.Segment = time.Second }},
		{"negative ffmpeg sample", func(o *Options) { o.FFmpegSample = -1 }},
		{"unknown backend", func(o *Options) { o.Backend = "gcs" }},
		{"unknown codec", func(o *Options) { o.Codec = "vp8" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.edit(&o)
			_, err := Run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), ErrBadOptions.Error()) {
				t.Fatalf("err = %v, want %v", err, ErrBadOptions)
			}
		})
	}
}

// checkCommon checks the fields every run fills.
func checkCommon(t *testing.T, rep *Report, o Options) {
	t.Helper()
	m := rep.Machine
	if m.GoVersion == "" || m.GOOS == "" || m.GOARCH == "" || m.CPUModel == "" || m.NumCPU < 1 {
		t.Errorf("machine not described: %+v", m)
	}
	if rep.Cameras != o.Cameras || rep.Backend != o.Backend || rep.Codec != o.Codec {
		t.Errorf("settings %d %s %s, want %d %s %s", rep.Cameras, rep.Backend, rep.Codec, o.Cameras, o.Backend, o.Codec)
	}
	if rep.WindowS < o.Duration.Seconds() {
		t.Errorf("window %vs shorter than the duration %v", rep.WindowS, o.Duration)
	}
	v := rep.Vigia
	if v.CPUSeconds <= 0 || v.CPUPercent <= 0 || v.CPUPercentPerCamera <= 0 {
		t.Errorf("recorder CPU not measured: %+v", v)
	}
	if v.RecordingCPUPercentPerCamera <= 0 || v.RecordingCPUPercentPerCamera > v.CPUPercentPerCamera {
		t.Errorf("recording CPU %v %% per camera, want in (0, %v]", v.RecordingCPUPercentPerCamera, v.CPUPercentPerCamera)
	}
	if m := v.Memory; m == nil || m.LiveHeapMiB <= 0 || m.AnonMiB <= 0 || m.FileMiB <= 0 {
		t.Errorf("memory breakdown missing: %+v", m)
	}
	if v.RSSBeforeMiB <= 0 || v.RSSEndMiB <= 0 || v.GoHeapMiB <= 0 {
		t.Errorf("recorder memory not measured: %+v", v)
	}
	if rep.Synth.CPUSeconds <= 0 || rep.Synth.RSSEndMiB <= 0 {
		t.Errorf("synth usage not measured: %+v", rep.Synth)
	}
	// The first keyframes' thumbnails, in the warm-up, started the
	// recorder's decoder processes.
	if d := rep.Decoders; d == nil || d.Processes == 0 || d.Usage.RSSEndMiB <= 0 || d.AnonMiB <= 0 || d.FileMiB <= 0 ||
		d.MeanAnonMiB <= 0 || d.PeakAnonMiB < d.MeanAnonMiB || d.PeakRSSMiB <= 0 {
		t.Errorf("decoder processes not measured: %+v", d)
	}
	s := rep.Segments
	if s.StoredFull == 0 || s.StoredShort == 0 || s.Stored != s.StoredFull+s.StoredShort || s.Bytes == 0 {
		t.Errorf("segments: %+v; want full ones and the short ones of shutdown", s)
	}
	if s.LatencyP50Ms <= 0 || s.LatencyP99Ms < s.LatencyP50Ms || s.LatencyMaxMs < s.LatencyP99Ms {
		t.Errorf("latencies not ordered or missing: %+v", s)
	}
	f := rep.Frames
	if f.FPS != 15 {
		t.Errorf("fps %v, want the synthetic cameras' 15", f.FPS)
	}
	if f.CamerasRecorded != o.Cameras {
		t.Errorf("%d of %d cameras recorded", f.CamerasRecorded, o.Cameras)
	}
	if f.Expected <= 0 || f.Stored <= 0 || f.Lost < 0 || f.Stored+f.Lost < f.Expected {
		t.Errorf("frames inconsistent: %+v", f)
	}
	if want := 100 * float64(f.Lost) / float64(f.Expected); f.LostPercent != want {
		t.Errorf("lost %v %%, want %v", f.LostPercent, want)
	}
	if f.MetricsErr != "" || f.Received <= 0 || f.Dropped == nil {
		t.Errorf("recorder counters not read: %+v", f)
	}
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
