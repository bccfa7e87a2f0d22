package bench

import (
	"bytes"
	"context"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/testenv"
)

// TestSweepWithMediaMTX runs a sweep small: a fleet of 2 cameras recorded
// by Vigia in a process of its own, then by MediaMTX, each once, frames
// counted from both recorders' files by the fleet's marks.
func TestSweepWithMediaMTX(t *testing.T) {
	mtx := testenv.MediaMTX(t)
	so := SweepOptions{
		Options: Options{
			Cameras: 2, Duration: 6 * time.Second, Warmup: 2 * time.Second, Backend: "fs", Codec: "mixed",
			Audio: true, Segment: 2 * time.Second, Dir: t.TempDir(),
			SynthCommand: testSynthCommand, Log: zaptest.NewLogger(t), Progress: testWriter{t},
		},
		Repeat: 1, MediaMTX: mtx, PhaseCommand: testPhaseCommand,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*runTimeout)
	defer cancel()
	rep, err := Sweep(ctx, so)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) != 1 || len(rep.Steps[0].Phases) != 2 {
		t.Fatalf("steps %+v, want one count with a phase of each recorder", rep.Steps)
	}
	for i, want := range []string{RecorderVigia, RecorderMediaMTX} {
		p := rep.Steps[0].Phases[i]
		if p.Recorder != want || p.Err != "" || p.Skipped != "" {
			t.Fatalf("phase %d: %s, error %q, skipped %q; want %s run", i, p.Recorder, p.Err, p.Skipped, want)
		}
		if p.CPUPercentPerCamera <= 0 || p.RSSEndMiB <= 0 || p.CamerasCPUPercentPerCamera <= 0 || p.MachineCPUPercent <= 0 {
			t.Errorf("%s: figures not measured: %+v", want, p)
		}
		f := p.Frames
		if f.CountedFrom != "marks" || f.CamerasRecorded != 2 || f.Stored < 2*15*3 || f.Unreadable != 0 {
			t.Errorf("%s: frames %+v, want at least 3 s of both cameras counted by their marks", want, f)
		}
		// MediaMTX last writes a segment's file as the next one starts,
		// and names that one by its first frame's arrival: read from file
		// times, its latency can be 0 ms (or under). Vigia's is measured
		// from the segment's end to the object stored.
		if p.FullSegments == 0 || p.LatencyP99Ms < 0 || (want == RecorderVigia && p.LatencyP99Ms <= 0) {
			t.Errorf("%s: latency over %d full segments, p99 %.0f ms", want, p.FullSegments, p.LatencyP99Ms)
		}
	}
	if v := rep.Steps[0].Phases[0]; v.Report == nil || v.Report.Frames.CountedFrom != "marks" {
		t.Errorf("the Vigia phase's report is missing or did not count the files' marks")
	}
	if _, ok := rep.Capacity[RecorderMediaMTX]; !ok || rep.PeerBaseRSSMiB <= 0 {
		t.Errorf("capacity %v, peer base RSS %.1f MiB", rep.Capacity, rep.PeerBaseRSSMiB)
	}
	if rep.Fleet == nil || rep.Fleet.SessionsTotal < 4 || rep.Fleet.Frames == 0 {
		t.Errorf("fleet counters %+v, want the sessions of both phases", rep.Fleet)
	}

	var text, md, svg bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"vigia / mediamtx at 2 cameras", "capacity vigia", "capacity mediamtx"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text lacks %q:\n%s", s, text.String())
		}
	}
	if !strings.Contains(md.String(), "| 2 | mediamtx |") {
		t.Errorf("markdown lacks the MediaMTX row:\n%s", md.String())
	}
	if err := xml.Unmarshal(svg.Bytes(), new(struct{})); err != nil || !strings.Contains(svg.String(), "<polyline") && !strings.Contains(svg.String(), "<circle") {
		t.Errorf("plot is not SVG with points (%v):\n%s", err, svg.String())
	}
}
