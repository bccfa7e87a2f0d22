package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// sweepPoint is one recorder at one count: its phases' figures.
type sweepPoint struct {
	cameras  int
	recorder string
	cpu      []float64 // recording CPU per camera, % of one core
	all      []float64 // all CPU per camera (thumbnails included)
	rss      []float64 // MiB per camera
	stored   []float64 // % of frames stored
	p99      []float64 // ms
	cams     []float64 // the fleet's CPU per camera
	ran      int
	passed   int
	skipped  string
	errs     []string
}

// points groups the phases by count and recorder, in the order run.
func (r *SweepReport) points() []sweepPoint {
	var out []sweepPoint
	for _, st := range r.Steps {
		for _, name := range []string{RecorderVigia, RecorderMediaMTX} {
			pt := sweepPoint{cameras: st.Cameras, recorder: name}
			found := false
			for _, p := range st.Phases {
				if p.Recorder != name {
					continue
				}
				found = true
				switch {
				case p.Skipped != "":
					pt.skipped = p.Skipped
					continue
				case p.Err != "":
					pt.ran++
					pt.errs = append(pt.errs, p.Err)
					continue
				}
				pt.ran++
				if p.Pass {
					pt.passed++
				}
				pt.cpu = append(pt.cpu, p.RecordingCPUPercentPerCamera)
				pt.all = append(pt.all, p.CPUPercentPerCamera)
				pt.rss = append(pt.rss, p.RSSPerCameraMiB)
				pt.stored = append(pt.stored, 100-p.Frames.LostPercent)
				pt.p99 = append(pt.p99, p.LatencyP99Ms)
				pt.cams = append(pt.cams, p.CamerasCPUPercentPerCamera)
			}
			if found {
				out = append(out, pt)
			}
		}
	}
	return out
}

// median of v (0 when empty).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// span formats the values of the runs: "a" or "a–b".
func span(v []float64, format string) string {
	if len(v) == 0 {
		return "—"
	}
	lo, hi := slices.Min(v), slices.Max(v)
	a, b := fmt.Sprintf(format, lo), fmt.Sprintf(format, hi)
	if a == b {
		return a
	}
	return a + "–" + b
}

// peerRatio returns Vigia's median recording CPU and RSS per camera over the
// peer's at count n, and whether both recorders met the bar there in every
// phase.
func (r *SweepReport) peerRatio(n int) (cpu, rss float64, complete, ok bool) {
	var v, m *sweepPoint
	pts := r.points()
	for i := range pts {
		if pts[i].cameras != n || len(pts[i].cpu) == 0 {
			continue
		}
		switch pts[i].recorder {
		case RecorderVigia:
			v = &pts[i]
		case RecorderMediaMTX:
			m = &pts[i]
		}
	}
	if v == nil || m == nil || median(m.cpu) <= 0 || median(m.rss) <= 0 {
		return 0, 0, false, false
	}
	complete = v.passed == v.ran && m.passed == m.ran
	return median(v.cpu) / median(m.cpu), median(v.rss) / median(m.rss), complete, true
}

// WriteText writes every phase, then each count's figures per recorder,
// the ratios and the capacity.
func (r *SweepReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	m := r.Machine
	fmt.Fprintf(tw, "go %s %s/%s; cpu %s, %d cores (GOMAXPROCS %d)\n", m.GoVersion, m.GOOS, m.GOARCH, m.CPUModel, m.NumCPU, m.GOMAXPROCS)
	codec := r.Codec
	if r.Audio {
		codec += " + AAC"
	}
	fmt.Fprintf(tw, "sweep: %s, backend %s, segments %gs, warm-up %gs, window %gs, %d runs of each recorder per count, alternated\n\n",
		codec, r.Backend, r.SegmentS, r.WarmupS, r.WindowS, r.Repeat)
	fmt.Fprintln(tw, "cameras\trecorder\trun\tCPU/camera\trecording\tRSS/camera\tframes stored\tlatency p99\tfleet CPU/camera\tmachine\tbar")
	for _, st := range r.Steps {
		for _, p := range st.Phases {
			if p.Skipped != "" || p.Err != "" {
				fmt.Fprintf(tw, "%d\t%s\t%d\t%s\n", st.Cameras, p.Recorder, p.Run, p.summary())
				continue
			}
			fmt.Fprintf(tw, "%d\t%s\t%d\t%.3f %%\t%.3f %%\t%.2f MiB\t%.3f %%\t%.0f ms\t%.4f %%\t%.0f %%\t%s\n",
				st.Cameras, p.Recorder, p.Run, p.CPUPercentPerCamera, p.RecordingCPUPercentPerCamera, p.RSSPerCameraMiB,
				100-p.Frames.LostPercent, p.LatencyP99Ms, p.CamerasCPUPercentPerCamera, p.MachineCPUPercent, strings.TrimSpace(verdict(p.Pass)))
		}
	}
	fmt.Fprintln(tw, "\t")
	for _, st := range r.Steps {
		if cpu, rss, complete, ok := r.peerRatio(st.Cameras); ok {
			note := ""
			if !complete {
				note = " (not both at the bar)"
			}
			fmt.Fprintf(tw, "vigia / mediamtx at %d cameras\tCPU %.2f, RSS %.2f%s\n", st.Cameras, cpu, rss, note)
		}
	}
	for _, name := range []string{RecorderVigia, RecorderMediaMTX} {
		if n, ok := r.Capacity[name]; ok {
			fmt.Fprintf(tw, "capacity %s\t%d cameras (≥ %.1f %% of frames stored, segment latency p99 < %v, in every run)\n",
				name, n, StoredTarget, LatencyTarget)
		}
	}
	if f := r.Fleet; f != nil {
		fmt.Fprintf(tw, "fleet\t%d sessions played, %d frames sent, %d dropped (readers behind), %d late (schedule a second behind)\n",
			f.SessionsTotal, f.Frames, f.Dropped, f.Late)
	}
	return tw.Flush()
}

// WriteMarkdown writes the sweep as a Markdown table: one row per count
// and recorder, the runs' range of each figure.
func (r *SweepReport) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| cameras | recorder | recording CPU per camera | all CPU per camera | RSS per camera | frames stored | segment latency p99 | fleet CPU per camera | at the bar |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, pt := range r.points() {
		if pt.skipped != "" && pt.ran == 0 {
			fmt.Fprintf(&b, "| %d | %s | not run: %s | | | | | | |\n", pt.cameras, pt.recorder, pt.skipped)
			continue
		}
		bar := fmt.Sprintf("%d of %d runs", pt.passed, pt.ran)
		if len(pt.errs) > 0 {
			bar += fmt.Sprintf(" (%d failed to run)", len(pt.errs))
		}
		all := span(pt.all, "%.3f %%")
		if pt.recorder != RecorderVigia {
			all = "(same)"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", pt.cameras, pt.recorder,
			span(pt.cpu, "%.3f %%"), all, span(pt.rss, "%.2f MiB"), span(pt.stored, "%.3f %%"),
			span(pt.p99, "%.0f ms"), span(pt.cams, "%.4f %%"), bar)
	}
	b.WriteString("\n")
	for _, st := range r.Steps {
		if cpu, rss, complete, ok := r.peerRatio(st.Cameras); ok {
			note := ""
			if !complete {
				note = " (not both at the bar)"
			}
			fmt.Fprintf(&b, "- Vigia / MediaMTX at %d cameras: CPU %.2f, RSS %.2f%s\n", st.Cameras, cpu, rss, note)
		}
	}
	for _, name := range []string{RecorderVigia, RecorderMediaMTX} {
		if n, ok := r.Capacity[name]; ok {
			fmt.Fprintf(&b, "- Capacity of %s: %d cameras\n", name, n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
