package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
)

// startTimeout bounds the start of the recorder (storage, NATS).
const startTimeout = 30 * time.Second

// stopGrace is how long a child gets to exit after SIGTERM.
const stopGrace = 5 * time.Second

// run is one benchmark run in progress; close releases what it started.
type run struct {
	o   Options
	dir string

	synth  *synthProc
	minio  *minio
	nats   *natsProc
	app    *app.App
	ffmpeg []*ffmpegRecorder
	col    *collector
	files  *fileCounter // Options.CountFiles

	recordingCPUPercent float64 // the recorder's CPU over the window, % of one core
}

// window is what is sampled at the start and end of the measured window.
type window struct {
	at      time.Time
	machine time.Duration // -1 when not readable
	self    time.Duration
	synth   time.Duration
	minio   time.Duration
	nats    time.Duration
	ffmpeg  []time.Duration // -1 when not readable
	decoder time.Duration   // the recorder's decoder processes, exited ones included
}

// Run performs one benchmark run: it starts the synthetic cameras, the
// storage and the recorder, adds the cameras and the FFmpeg sample, waits
// for the warm-up, measures the window, closes everything (finishing and
// storing the open segments) and returns the report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if _, err := selfCPU(); err != nil {
		return nil, err
	}
	fps, err := cameraFPS(o.Codec)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(o.Dir, "vigia-bench-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	if o.MemProfile != "" && runtime.MemProfileRate == 0 {
		// vigia runs with the memory profiler off (cmd/vigia); a heap
		// profile needs it on from the start of the run.
		runtime.MemProfileRate = defaultMemProfileRate
	}
	r := &run{o: o, dir: dir, col: newCollector(o.Segment)}
	defer r.close()
	return r.run(ctx, fps)
}

func (r *run) progress(format string, args ...any) {
	fmt.Fprintf(r.o.Progress, "bench: "+format+"\n", args...)
}

func (r *run) run(ctx context.Context, fps float64) (*Report, error) {
	o := r.o
	var err error
	r.progress("starting %d synthetic cameras (%s) in a child process", o.Cameras, o.Codec)
	if r.synth, err = startSynth(ctx, o); err != nil {
		return nil, err
	}
	if o.Backend == "s3" {
		r.progress("starting MinIO (%s)", o.MinIO)
		if r.minio, err = startMinIO(ctx, o.MinIO, filepath.Join(r.dir, "minio")); err != nil {
			return nil, err
		}
	}
	if o.NATSProcess {
		r.progress("starting NATS in a child process (vigia nats)")
		if r.nats, err = startNATS(ctx, o, filepath.Join(r.dir, "nats")); err != nil {
			return nil, err
		}
	}
	if err := r.startRecorder(ctx); err != nil {
		return nil, err
	}
	rssBefore, err := procRSS(0)
	anonBefore, fileBefore, _ := procRSSParts()
	if err != nil {
		return nil, err
	}
	cameras := make([]string, o.Cameras)
	given := time.Now()
	for i, url := range r.synth.urls {
		cameras[i] = fmt.Sprintf("cam-%d", i+1)
		if err := r.app.RecordCamera(ingest.Camera{ID: cameras[i], URL: url, Sound: o.Audio, Trusted: true}); err != nil {
			return nil, fmt.Errorf("add camera %s: %w", cameras[i], err)
		}
	}
	recordStart := time.Now()
	if err := r.waitOnline(ctx, cameras); err != nil {
		return nil, err
	}
	for i := range o.FFmpegSample {
		f, err := startFFmpeg(o.FFmpeg, r.synth.urls[i], filepath.Join(r.dir, "ffmpeg", cameras[i]), o.Segment)
		if err != nil {
			return nil, err
		}
		r.ffmpeg = append(r.ffmpeg, f)
	}

	r.progress("recording %d cameras (%d also with FFmpeg); warming up for %v", o.Cameras, o.FFmpegSample, o.Warmup)
	if err := r.wait(ctx, o.Warmup); err != nil {
		return nil, err
	}
	r.progress("warm-up done (%d segments stored); measuring for %v", r.col.count(), o.Duration)
	w0 := r.sample()
	im0, im0Err := r.imagingCounters(ctx)
	au0, au0Err := r.audioCounters(ctx)
	if o.MemProfile != "" {
		if err := writeHeapProfile(o.MemProfile + ".start"); err != nil {
			return nil, err
		}
	}
	stopProfile, err := startProfile(o.CPUProfile)
	if err != nil {
		return nil, err
	}
	decoders := r.sampleDecoders(decoderSampleEvery)
	soakDone := make(chan []Sample, 1)
	go func() {
		sp := sampling{every: o.SampleEvery}
		if o.Flap > 0 {
			sp.cycle, sp.offset = flapEvery, flapSampleAt
		}
		soakDone <- sampleResources(ctx, sp, o.Duration, func(s Sample) {
			r.progress("sample at %4.0f s: RSS %.1f MiB (anonymous %.1f, files %.1f), Go %.1f MiB, heap %.1f MiB (live %.1f), %d goroutines, %d open files",
				s.AtS, s.RSSMiB, s.AnonMiB, s.FileMiB, s.GoMiB, s.HeapMiB, s.LiveHeapMiB, s.Goroutines, s.OpenFiles)
		})
	}()
	err = r.wait(ctx, o.Duration)
	decoders.stop()
	w1 := r.sample()
	im1, im1Err := r.imagingCounters(ctx)
	au1, au1Err := r.audioCounters(ctx)
	stopProfile()
	if err != nil {
		return nil, err
	}
	if err := writeHeapProfile(o.MemProfile); err != nil {
		return nil, err
	}

	rep := &Report{
		Machine: machine(), Cameras: o.Cameras, Codec: o.Codec, Audio: o.Audio, Backend: o.Backend,
		SegmentS: o.Segment.Seconds(), WarmupS: o.Warmup.Seconds(), WindowS: w1.at.Sub(w0.at).Seconds(),
		CPUProfile: o.CPUProfile, MemProfile: o.MemProfile,
	}
	rep.Vigia = usage(w1.self-w0.self, w1.at.Sub(w0.at), o.Cameras)
	r.recordingCPUPercent = rep.Vigia.CPUPercent
	rep.Vigia.RSSBeforeMiB = mib(rssBefore)
	if rss, err := procRSS(0); err == nil {
		rep.Vigia.RSSEndMiB = mib(rss)
		rep.Vigia.RSSPerCameraMiB = mib(rss-rssBefore) / float64(o.Cameras)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.Vigia.GoHeapMiB = mib(int64(ms.HeapInuse))
	rep.Vigia.Memory = memoryStats(&ms)
	rep.Vigia.Memory.AnonBeforeMiB, rep.Vigia.Memory.FileBeforeMiB = mib(anonBefore), mib(fileBefore)
	rep.Synth = r.childUsage(r.synth.pid(), w1.synth-w0.synth, w1.at.Sub(w0.at))
	if r.minio != nil {
		u := r.childUsage(r.minio.pid(), w1.minio-w0.minio, w1.at.Sub(w0.at))
		rep.Storage = &u
	}
	if r.nats != nil {
		u := r.childUsage(r.nats.pid(), w1.nats-w0.nats, w1.at.Sub(w0.at))
		rep.NATS = &u
	}
	rep.FFmpeg = r.ffmpegStats(w0, w1)
	rep.Decoders = r.decoderStats(w0, w1, decoders)
	rep.MachineCPU = machineStats(w0, w1, rep)
	rep.Imaging = imagingStats(im0, im1, im0Err, im1Err, rep.WindowS, o.Cameras)
	if o.Audio {
		rep.AudioCodec = o.AudioCodec
		rep.AudioTranscode = audioStats(o.AudioCodec, au0, au1, au0Err, au1Err, rep.WindowS)
	}
	// Decoding, scaling and encoding run in the decoder processes, not in
	// this one: what is left here is recording, with the little imaging
	// work of the recorder's side (keyframes read back and sent, motion's
	// comparison of 160-pixel luma pictures).
	rep.Vigia.RecordingCPUPercentPerCamera = rep.Vigia.CPUPercentPerCamera
	rep.Live = r.measureLive(ctx, cameras[0])
	rep.WebRTC = r.measureWebRTC(ctx, cameras)
	if samples := <-soakDone; len(samples) > 0 {
		rep.Soak = soakReport(samples)
	}

	rep.Frames.FPS = fps
	r.scrape(ctx, &rep.Frames)
	if o.Fleet {
		rep.Fleet = r.synth.fleetStats(5 * time.Second)
	}

	r.progress("closing: finishing open segments and storing them")
	r.stopFFmpeg(rep.FFmpeg)
	recordWindow := time.Since(recordStart)
	r.col.beginClose()
	r.app.Close()
	r.app = nil

	rep.Segments = r.col.segmentStats()
	rep.StartUp = r.col.startUp(cameras, given)
	r.progress("%d of %d cameras recorded; their first stored segment starts after they were given: p50 %.1f s, p90 %.1f s, max %.1f s",
		rep.StartUp.Recorded, rep.StartUp.Cameras, rep.StartUp.FirstSegmentP50S, rep.StartUp.FirstSegmentP90S, rep.StartUp.FirstSegmentMaxS)
	f := r.col.frameStats(cameras, fps, recordWindow)
	f.CountedFrom = "metadata"
	if r.files != nil {
		r.progress("counting frames in the stored files")
		files, bad, err := r.files.count()
		if err != nil {
			r.progress("%d files not readable, the first: %v", bad, err)
		}
		f = fileFrameStats(cameras, files, fps, recordWindow)
		f.Unreadable = bad
		switch {
		case r.files.root == "":
			f.CountedFrom = "metadata"
		case f.CountedFrom == "":
			f.CountedFrom = "files"
		}
	}
	f.FPS, f.Received, f.Dropped, f.Reconnects, f.MetricsErr =
		fps, rep.Frames.Received, rep.Frames.Dropped, rep.Frames.Reconnects, rep.Frames.MetricsErr
	rep.Frames = f
	if rep.FFmpeg != nil && rep.FFmpeg.Usage.CPUPercentPerCamera > 0 {
		rep.FFmpeg.Ratio = rep.Vigia.CPUPercentPerCamera / rep.FFmpeg.Usage.CPUPercentPerCamera
		rep.FFmpeg.RecordingRatio = rep.Vigia.RecordingCPUPercentPerCamera / rep.FFmpeg.Usage.CPUPercentPerCamera
	}
	return rep, nil
}

// startRecorder builds the recorder through app.New, as `vigia recorder`
// does, with everything local: a temporary data directory, an embedded NATS
// server and HTTP on free ports.
func (r *run) startRecorder(ctx context.Context) error {
	cfg := config.Default()
	cfg.NodeID = "bench"
	cfg.HTTP.MetricsToken = benchMetricsToken
	cfg.DataDir = filepath.Join(r.dir, "data")
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.Listen = "127.0.0.1:0"
	if r.nats != nil {
		cfg.NATS.URL = r.nats.url
	}
	cfg.Recording.SegmentDuration = config.Duration(r.o.Segment)
	cfg.WebRTC.Interfaces = "lo" // the viewers are on this machine
	// The viewers share one address, and those of one camera one token.
	n := max(r.o.WebRTCViewers+1, cfg.WebRTC.MaxSessionsPerToken)
	cfg.WebRTC.MaxSessionsPerToken, cfg.WebRTC.MaxSessionsPerAddress = n, max(n, cfg.WebRTC.MaxSessionsPerAddress)
	cfg.WebRTC.MaxSessionsPerCamera = max(n, cfg.WebRTC.MaxSessionsPerCamera)
	cfg.Motion.Enabled = r.o.Motion
	cfg.Ingest.ConnectRate = benchConnectRate(r.o.Cameras, cfg.Ingest.ConnectRate)
	if r.o.SpoolSync != "" {
		cfg.Recording.SpoolSync = r.o.SpoolSync
	}
	cfg.Storage.Backend = r.o.Backend
	if r.minio != nil {
		cfg.Storage.Endpoint = r.minio.endpoint
		cfg.Storage.Bucket = "vigia-bench"
		cfg.Storage.AccessKey = r.minio.accessKey
		cfg.Storage.SecretKey = r.minio.secretKey
	}
	if err := cfg.Resolve(); err != nil {
		return fmt.Errorf("recorder config: %w", err)
	}
	cfg.HTTP.PublicURL = "" // the app then reports the address it listens on
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("recorder config: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	onStored := r.col.stored
	switch {
	case r.o.CountFiles:
		r.files = &fileCounter{discard: r.o.Discard}
		if cfg.Storage.Backend == "fs" {
			r.files.root = cfg.Storage.Path
		}
		onStored = func(seg segmenter.Segment, latency time.Duration) {
			r.col.stored(seg, latency)
			r.files.stored(seg)
		}
	case r.o.Discard:
		onStored = func(seg segmenter.Segment, latency time.Duration) {
			r.col.stored(seg, latency)
			// Counted: the object can go, so that a long run does not fill
			// the disk (100 cameras store about 90 GB an hour).
			if a := r.app; a != nil {
				dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_ = a.Store().Delete(dctx, []string{storage.SegmentKey(seg.Camera, seg.Start, seg.Duration, seg.InitSize)})
				cancel()
			}
		}
	}
	a, err := app.New(ctx, cfg, app.Mode{Name: "bench", Recorder: true, OnSegmentStored: onStored, DecoderCommand: r.o.DecoderCommand}, r.o.Log)
	if err != nil {
		return fmt.Errorf("recorder: %w", err)
	}
	r.app = a
	return nil
}

// wait waits for d, failing early if the context ends or the synthetic
// cameras exit.
func (r *run) wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-r.synth.done:
		return r.synth.exitError()
	}
}

// sample reads the CPU counters of every process.
func (r *run) sample() window {
	w := window{at: time.Now()}
	var err error
	if w.machine, err = machineCPU(); err != nil {
		w.machine = -1
	}
	w.self, _ = selfCPU() // checked to work in Run
	w.synth, _ = procCPU(r.synth.pid())
	if r.minio != nil {
		w.minio, _ = procCPU(r.minio.pid())
	}
	if r.nats != nil {
		w.nats, _ = procCPU(r.nats.pid())
	}
	w.decoder = r.app.Decoders().Stats().CPU
	for _, f := range r.ffmpeg {
		c, err := procCPU(f.pid())
		if err != nil || f.exited() {
			c = -1
		}
		w.ffmpeg = append(w.ffmpeg, c)
	}
	return w
}

// childUsage is a child's usage over the window, with its resident set now.
func (r *run) childUsage(pid int, cpu, window time.Duration) Usage {
	u := usage(cpu, window, r.o.Cameras)
	if rss, err := procRSS(pid); err == nil {
		u.RSSEndMiB = mib(rss)
	}
	return u
}

// ffmpegStats is the FFmpeg sample's usage over the window; nil without a
// sample.
func (r *run) ffmpegStats(w0, w1 window) *FFmpegStats {
	if len(r.ffmpeg) == 0 {
		return nil
	}
	st := &FFmpegStats{Processes: len(r.ffmpeg)}
	var cpu time.Duration
	var rss int64
	for i, f := range r.ffmpeg {
		if w0.ffmpeg[i] < 0 || w1.ffmpeg[i] < 0 {
			continue
		}
		n, err := procRSS(f.pid())
		if err != nil {
			continue
		}
		st.Alive++
		cpu += w1.ffmpeg[i] - w0.ffmpeg[i]
		rss += n
	}
	if st.Alive > 0 {
		st.Usage = usage(cpu, w1.at.Sub(w0.at), st.Alive)
		st.Usage.RSSEndMiB = mib(rss)
		st.Usage.RSSPerCameraMiB = mib(rss) / float64(st.Alive)
	}
	return st
}

// stopFFmpeg stops the FFmpeg sample and records what it wrote.
func (r *run) stopFFmpeg(st *FFmpegStats) {
	for _, f := range r.ffmpeg {
		early := f.exited()
		f.stop(stopGrace)
		if st == nil {
			continue
		}
		if early {
			st.Errors = append(st.Errors, f.exitError().Error())
		}
		n, b := f.output()
		st.Files += n
		st.Bytes += b
	}
	r.ffmpeg = nil
}

// scrape reads the recorder's frame counters from its /metrics endpoint.
func (r *run) scrape(ctx context.Context, f *FrameStats) {
	samples, err := scrapeMetrics(ctx, r.app.URL()+"/metrics")
	if err != nil {
		f.MetricsErr = err.Error()
		return
	}
	f.Dropped = map[string]float64{}
	for _, s := range samples {
		switch s.name {
		case "vigia_received_frames_total":
			f.Received += s.value
		case "vigia_dropped_frames_total":
			f.Dropped[s.label("reason")] += s.value
		case "vigia_camera_reconnects_total":
			f.Reconnects += s.value
		}
	}
}

// close stops whatever is still running, in order: FFmpeg, the recorder
// (which finishes and stores open segments), the cameras, the storage.
func (r *run) close() {
	r.stopFFmpeg(nil)
	if r.app != nil {
		r.app.Close()
	}
	if r.synth != nil {
		r.synth.stop(stopGrace)
	}
	if r.minio != nil {
		r.minio.stop(stopGrace)
	}
	if r.nats != nil {
		r.nats.stop(stopGrace)
	}
}

// defaultMemProfileRate is the Go runtime's default runtime.MemProfileRate.
const defaultMemProfileRate = 512 * 1024

// startProfile starts a CPU profile into path when it is set; the returned
// function stops it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}

// writeHeapProfile writes a heap profile into path when it is set.
func writeHeapProfile(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("heap profile: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}

// cameraFPS is the frame rate of the synthetic cameras.
func cameraFPS(codec string) (float64, error) {
	if codec == "mixed" {
		codec = synth.CodecH264
	}
	clip, err := synth.Fixture(codec, false)
	if err != nil {
		return 0, fmt.Errorf("synthetic clip: %w", err)
	}
	return clip.FPS, nil
}

// usage turns CPU time over a window into percentages of one core.
func usage(cpu, window time.Duration, cameras int) Usage {
	u := Usage{CPUSeconds: cpu.Seconds()}
	if window > 0 {
		u.CPUPercent = 100 * cpu.Seconds() / window.Seconds()
	}
	if cameras > 0 {
		u.CPUPercentPerCamera = u.CPUPercent / float64(cameras)
	}
	return u
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// memoryStats splits the process's memory now.
func memoryStats(ms *runtime.MemStats) *MemoryStats {
	m := &MemoryStats{
		LiveHeapMiB:  mib(liveHeap()),
		HeapInuseMiB: mib(int64(ms.HeapInuse)),
		HeapFreeMiB:  mib(int64(ms.HeapIdle - ms.HeapReleased)),
		StacksMiB:    mib(int64(ms.StackSys)),
		RuntimeMiB:   mib(int64(ms.Sys - ms.HeapSys - ms.StackSys)),
	}
	if anon, file, err := procRSSParts(); err == nil {
		m.AnonMiB, m.FileMiB = mib(anon), mib(file)
	}
	return m
}

// measureLive watches the first camera live for LiveWindow, as one LL-HLS
// viewer, after the measured window: the CPU and memory per camera are those
// of recording, and what the viewer adds is reported with the latency.
func (r *run) measureLive(ctx context.Context, camera string) *LiveStats {
	if r.o.LiveWindow <= 0 {
		return nil
	}
	r.progress("measuring live latency on %s for %v", camera, r.o.LiveWindow)
	rss0, _ := procRSS(0)
	cpu0, _ := selfCPU()
	start := time.Now()
	url := r.app.LiveURL(camera, time.Now().Add(time.Hour))
	samples, err := measureLive(ctx, url, r.o.LiveWindow)
	st := liveStats(camera, samples, err)
	st.WindowS = r.o.LiveWindow.Seconds()
	cpu1, _ := selfCPU()
	rss1, _ := procRSS(0)
	if el := time.Since(start); el > 0 && r.o.Cameras > 0 {
		st.RecorderCPUPercent = 100 * (cpu1 - cpu0).Seconds() / el.Seconds()
		st.ViewerCPUPercent = st.RecorderCPUPercent - r.recordingCPUPercent
	}
	st.RSSDeltaMiB = mib(rss1 - rss0)
	return st
}

// machineStats is the busy time of the whole machine over the window, and
// what of it is neither the recorder nor the processes the run started:
// kernel threads (writeback and journal commits of the recorder's writes,
// among others) and anything else running. Nil when /proc/stat could not
// be read.
func machineStats(w0, w1 window, rep *Report) *MachineCPU {
	if w0.machine < 0 || w1.machine < 0 {
		return nil
	}
	win := w1.at.Sub(w0.at)
	m := &MachineCPU{CPUPercent: 100 * (w1.machine - w0.machine).Seconds() / win.Seconds()}
	other := m.CPUPercent - rep.Vigia.CPUPercent - rep.Synth.CPUPercent
	if rep.Storage != nil {
		other -= rep.Storage.CPUPercent
	}
	if rep.NATS != nil {
		other -= rep.NATS.CPUPercent
	}
	if rep.FFmpeg != nil {
		other -= rep.FFmpeg.Usage.CPUPercent
	}
	if rep.Decoders != nil {
		other -= rep.Decoders.Usage.CPUPercent
	}
	m.OtherCPUPercent = max(other, 0)
	return m
}
