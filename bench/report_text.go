package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Targets from the project's benchmark goals, per camera.
const (
	// TargetCPUPercent is the most CPU per camera, in % of one core.
	TargetCPUPercent = 0.2
	// TargetRSSMiB is the most resident memory per camera.
	TargetRSSMiB = 1.0
	// TargetFleetCPUPercent is the most the lean fleet may cost per
	// camera, in % of one core: a load generator that costs a tenth of
	// what it loads.
	TargetFleetCPUPercent = 0.03
)

// WriteText writes the report as a readable table.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(k, format string, args ...any) {
		fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...))
	}
	m := r.Machine
	p("go", "%s %s/%s", m.GoVersion, m.GOOS, m.GOARCH)
	p("cpu", "%s, %d cores (GOMAXPROCS %d)", m.CPUModel, m.NumCPU, m.GOMAXPROCS)
	if m.Kernel != "" {
		p("kernel", "%s", m.Kernel)
	}
	codec := r.Codec
	if r.Audio {
		switch r.AudioCodec {
		case "", "aac":
			codec += " + AAC"
		case "opus":
			codec += " + Opus"
		default:
			codec += " + G.711"
		}
	}
	p("run", "%d cameras %s, backend %s, segments %gs, warm-up %gs, window %.1fs",
		r.Cameras, codec, r.Backend, r.SegmentS, r.WarmupS, r.WindowS)
	fmt.Fprintln(tw, "\t")

	v := r.Vigia
	p("vigia CPU", "%.1f %% of one core, %.3f %% per camera: recording (target ≤ %.1f %%)%s; decoding runs in the decoder processes",
		v.CPUPercent, v.CPUPercentPerCamera, TargetCPUPercent, verdict(v.RecordingCPUPercentPerCamera <= TargetCPUPercent))
	p("vigia RSS", "%.1f MiB before cameras, %.1f MiB at end, %.2f MiB per camera (target ≤ %.1f MiB)%s; Go heap %.1f MiB",
		v.RSSBeforeMiB, v.RSSEndMiB, v.RSSPerCameraMiB, TargetRSSMiB, verdict(v.RSSPerCameraMiB <= TargetRSSMiB), v.GoHeapMiB)
	if m := v.Memory; m != nil {
		p("vigia memory", "Go heap live %.1f, in use %.1f, free not returned %.1f, stacks %.1f, runtime %.1f MiB; resident anonymous %.1f, files %.1f MiB",
			m.LiveHeapMiB, m.HeapInuseMiB, m.HeapFreeMiB, m.StacksMiB, m.RuntimeMiB, m.AnonMiB, m.FileMiB)
		if r.Cameras > 0 {
			p("vigia RSS growth", "per camera: anonymous %.2f MiB, files %.2f MiB (code and libraries paged in once: not per camera)",
				(m.AnonMiB-m.AnonBeforeMiB)/float64(r.Cameras), (m.FileMiB-m.FileBeforeMiB)/float64(r.Cameras))
		}
	}
	if d := r.Decoders; d != nil {
		p("decoder processes", "%d running at the end, %d restarts: %.1f %% of one core, %.3f %% per camera; anonymous memory %.1f MiB mean, %.1f MiB peak (%.3f MiB per camera); RSS %.1f MiB peak, %.1f MiB at the end (anonymous %.1f, files %.1f)",
			d.Processes, d.Restarts, d.Usage.CPUPercent, d.Usage.CPUPercentPerCamera, d.MeanAnonMiB, d.PeakAnonMiB,
			d.Usage.RSSPerCameraMiB, d.PeakRSSMiB, d.Usage.RSSEndMiB, d.AnonMiB, d.FileMiB)
		p("vigia + decoders", "%.3f %% of one core per camera, %.2f MiB per camera (the recorder's RSS growth and the decoders' mean anonymous memory: their file pages are the binary and libraries the recorder maps too)",
			v.CPUPercentPerCamera+d.Usage.CPUPercentPerCamera, v.RSSPerCameraMiB+d.Usage.RSSPerCameraMiB)
	}
	s := r.Segments
	p("segments", "%d stored (%d full, %d short), %.1f MiB", s.Stored, s.StoredFull, s.StoredShort, mib(s.Bytes))
	if s.StoredFull > 0 {
		p("latency", "p50 %.0f ms, p99 %.0f ms, max %.0f ms (segment end → object stored, %d full segments)",
			s.LatencyP50Ms, s.LatencyP99Ms, s.LatencyMaxMs, s.StoredFull)
	} else {
		p("latency", "none measured: no segment reached the segment duration (warm-up + duration too short)")
	}
	if s.StoredShort > 0 {
		p("latency, short", "p50 %.0f ms, max %.0f ms (%d segments cut early, by shutdown all at once)",
			s.ShortLatencyP50Ms, s.ShortLatencyMaxMs, s.StoredShort)
	}
	f := r.Frames
	p("frames lost", "%d of %d (%.3f %%); %d stored; %d/%d cameras recorded", f.Lost, f.Expected, f.LostPercent, f.Stored, f.CamerasRecorded, r.Cameras)
	if f.MetricsErr != "" {
		p("recorder counters", "not read: %s", f.MetricsErr)
	} else {
		p("recorder counters", "%.0f units received, dropped: %s, reconnects %.0f", f.Received, dropped(f.Dropped), f.Reconnects)
	}
	p("synth process", "%.1f %% of one core (%.4f %% per camera), %.1f MiB RSS (not counted)", r.Synth.CPUPercent, r.Synth.CPUPercentPerCamera, r.Synth.RSSEndMiB)
	if f := r.Fleet; f != nil {
		p("fleet", "%.4f %% of one core per camera (target ≤ %.2f %%)%s; %d sessions playing, %d frames sent, %d dropped (readers behind), %d late (schedule a second behind)",
			r.Synth.CPUPercentPerCamera, TargetFleetCPUPercent, verdict(r.Synth.CPUPercentPerCamera <= TargetFleetCPUPercent), f.Sessions, f.Frames, f.Dropped, f.Late)
	}
	if r.Storage != nil {
		p("minio process", "%.1f %% of one core, %.1f MiB RSS (not counted)", r.Storage.CPUPercent, r.Storage.RSSEndMiB)
	}
	if r.NATS != nil {
		p("nats process", "%.1f %% of one core, %.1f MiB RSS (not counted)", r.NATS.CPUPercent, r.NATS.RSSEndMiB)
	}
	if m := r.MachineCPU; m != nil {
		p("machine CPU", "%.1f %% of one core in all; kernel threads (writeback, journal) and other processes %.1f %% (%.3f %% per camera)",
			m.CPUPercent, m.OtherCPUPercent, m.OtherCPUPercent/float64(max(r.Cameras, 1)))
	}
	if sk := r.Soak; sk != nil && len(sk.Samples) > 0 {
		first, last := sk.Samples[0], sk.Samples[len(sk.Samples)-1]
		p("soak samples", "%d over %.0f s: RSS %.1f → %.1f MiB, heap %.1f → %.1f MiB (live %.1f → %.1f), goroutines %d → %d, open files %d → %d",
			len(sk.Samples), last.AtS, first.RSSMiB, last.RSSMiB, first.HeapMiB, last.HeapMiB, first.LiveHeapMiB, last.LiveHeapMiB,
			first.Goroutines, last.Goroutines, first.OpenFiles, last.OpenFiles)
		p("soak growth", "RSS %+.2f %%/h, heap %+.2f %%/h, live heap %+.2f %%/h, goroutines %+.2f %%/h, open files %+.2f %%/h (target under 1 %%/h)",
			sk.RSSGrowthPctPerHour, sk.HeapGrowthPctPerHour, sk.LiveHeapGrowthPctPerHr, sk.GoroutineGrowthPctPerHr, sk.OpenFileGrowthPctPerHr)
		p("soak memory growth", "Go runtime %+.2f %%/h, anonymous memory outside Go (C, fragment buffers) %+.2f %%/h",
			sk.GoGrowthPctPerHr, sk.OtherAnonGrowthPctPerHr)
	}
	if l := r.Live; l != nil {
		if l.Err != "" && l.Parts == 0 {
			p("live latency", "not measured: %s", l.Err)
		} else {
			p("live latency", "p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d LL-HLS parts of %s, one viewer for %.0f s after the window)",
				l.P50Ms, l.P99Ms, l.MaxMs, l.Parts, l.Camera, l.WindowS)
			p("live viewer cost", "recorder at %.1f %% of one core while watched (%+.1f %% over the window), resident set %+.1f MiB",
				l.RecorderCPUPercent, l.ViewerCPUPercent, l.RSSDeltaMiB)
		}
	}
	for _, w := range r.WebRTC {
		if w.Err != "" {
			p("webrtc: "+w.Name, "not measured: %s", w.Err)
			continue
		}
		sockets := "plain sockets"
		if w.GRO {
			sockets = "runs taken whole"
		}
		p("webrtc: "+w.Name, "%.4f %% of one core and %.3f MiB per viewer (recorder at %.1f %%, %.1f %% just before), %d/%d connected, %.0f frames each in %.0f s, %d packets lost (machine UDP receive-buffer drops %d; %s)",
			w.CPUPercentPerViewer, w.RSSPerViewerMiB, w.RecorderCPUPercent, w.BaselineCPUPercent, w.Connected, w.Viewers, w.FramesPerViewer, w.WindowS, w.LostPackets, w.UDPRcvbufErrors, sockets)
	}
	if r.Imaging != nil {
		for _, l := range r.Imaging.text() {
			p(l[0], "%s", l[1])
		}
	}
	if r.AudioTranscode != nil {
		for _, l := range r.AudioTranscode.text() {
			p(l[0], "%s", l[1])
		}
	}
	if x := r.FFmpeg; x != nil {
		fmt.Fprintln(tw, "\t")
		p("ffmpeg sample", "%d processes (%d measured), %d files, %.1f MiB", x.Processes, x.Alive, x.Files, mib(x.Bytes))
		p("ffmpeg CPU", "%.3f %% of one core per camera", x.Usage.CPUPercentPerCamera)
		p("ffmpeg RSS", "%.1f MiB per camera", x.Usage.RSSPerCameraMiB)
		if x.Ratio > 0 {
			p("vigia / ffmpeg CPU", "%.2f (recording alone %.2f)", x.Ratio, x.RecordingRatio)
		}
		for _, e := range x.Errors {
			p("ffmpeg error", "%s", strings.ReplaceAll(strings.TrimSpace(e), "\n", " | "))
		}
	}
	if r.CPUProfile != "" {
		p("cpu profile", "%s (go tool pprof -top %s)", r.CPUProfile, r.CPUProfile)
	}
	if r.MemProfile != "" {
		p("heap profile", "%s (go tool pprof -sample_index=inuse_space -top %s)", r.MemProfile, r.MemProfile)
	}
	return tw.Flush()
}

func verdict(ok bool) string {
	if ok {
		return " ok"
	}
	return " MISSED"
}

func dropped(d map[string]float64) string {
	if len(d) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.0f", k, d[k])
	}
	return strings.Join(parts, ", ")
}
