package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/vigia/vigia/bench"
)

// sweepFlags are the flags of `vigia bench` that make a sweep or a
// comparison with a peer recorder (docs/benchmarks.md).
type sweepFlags struct {
	sweep    string
	peer     string
	repeat   int
	plot     string
	markdown string
	phase    string
}

// parseCounts parses "100,250,500".
func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--sweep %q: want camera counts such as 100,250,500", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// parsePeer parses "mediamtx=PATH".
func parsePeer(s string) (string, error) {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name != "mediamtx" || path == "" {
		return "", fmt.Errorf("--peer %q: want mediamtx=PATH (the MediaMTX binary)", s)
	}
	return path, nil
}

// runSweep runs a sweep with the options of the other flags as every
// phase's, prints the table (and JSON with --json), and writes the plot
// and the Markdown table when asked.
func runSweep(ctx context.Context, o bench.Options, sf sweepFlags, asJSON bool, stdout io.Writer) error {
	so := bench.SweepOptions{Options: o, Repeat: sf.repeat}
	var err error
	if sf.sweep != "" {
		if so.Counts, err = parseCounts(sf.sweep); err != nil {
			return err
		}
	}
	if sf.peer != "" {
		if so.MediaMTX, err = parsePeer(sf.peer); err != nil {
			return err
		}
	}
	rep, err := bench.Sweep(ctx, so)
	if err != nil {
		return err
	}
	text := stdout
	if asJSON {
		text = os.Stderr
	}
	if err := rep.WriteText(text); err != nil {
		return err
	}
	if sf.plot != "" {
		if err := writeFileWith(sf.plot, rep.WriteSVG); err != nil {
			return err
		}
	}
	if sf.markdown != "" {
		if err := writeFileWith(sf.markdown, rep.WriteMarkdown); err != nil {
			return err
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return nil
}

// writeFileWith creates path and fills it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
