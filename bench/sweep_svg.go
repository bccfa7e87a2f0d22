package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Colours of the recorders in the plot.
var plotColors = map[string]string{RecorderVigia: "#1f6fb4", RecorderMediaMTX: "#e3741b"}

// plotPanel is one chart of the plot: a figure per camera against the
// camera count.
type plotPanel struct {
	title string
	unit  string
	value func(pt sweepPoint) []float64
	goal  float64 // dashed line; 0 for none
}

// WriteSVG draws the sweep as an SVG image: recording CPU and resident set
// per camera against the camera count, a dot per run and a line through
// the medians of each recorder, the goals dashed.
func (r *SweepReport) WriteSVG(w io.Writer) error {
	panels := []plotPanel{
		{title: "recording CPU per camera", unit: "% of one core", value: func(p sweepPoint) []float64 { return p.cpu }, goal: 0.1},
		{title: "resident memory per camera", unit: "MiB", value: func(p sweepPoint) []float64 { return p.rss }, goal: 0.5},
	}
	const (
		pw, ph       = 420.0, 280.0 // panel plot area
		left, top    = 70.0, 60.0
		gap          = 90.0
		width        = left + 2*pw + gap + 30
		height       = top + ph + 90
		titleSize    = 15
		labelSize    = 12
		tickSize     = 11
		maxTickCount = 6
	)
	pts := r.points()
	maxN := 0
	for _, p := range pts {
		maxN = max(maxN, p.cameras)
	}
	if maxN == 0 {
		maxN = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	codec := r.Codec
	if r.Audio {
		codec += " + AAC"
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="24" font-size="%d" font-weight="bold">%s</text>`+"\n", left, titleSize,
		html.EscapeString(fmt.Sprintf("vigia bench sweep: %s, %s backend, %gs segments, %gs window, %d runs per point; %s", codec, r.Backend, r.SegmentS, r.WindowS, r.Repeat, r.Machine.CPUModel)))
	for i, panel := range panels {
		x0 := left + float64(i)*(pw+gap)
		ymax := panel.goal
		for _, p := range pts {
			for _, v := range panel.value(p) {
				ymax = max(ymax, v)
			}
		}
		ymax = niceCeil(ymax * 1.1)
		xs := func(n float64) float64 { return x0 + pw*n/float64(maxN) }
		ys := func(v float64) float64 { return top + ph - ph*v/ymax }
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="%d">%s (%s)</text>`+"\n", x0, top-12, labelSize, html.EscapeString(panel.title), html.EscapeString(panel.unit))
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#888"/>`+"\n", x0, top, pw, ph)
		step := niceStep(ymax / maxTickCount)
		for v := 0.0; v <= ymax+step/1e6; v += step {
			y := ys(v)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`+"\n", x0, y, x0+pw, y)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%d" text-anchor="end">%s</text>`+"\n", x0-6, y+4, tickSize, trimFloat(v))
		}
		for _, st := range r.Steps {
			x := xs(float64(st.Cameras))
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`+"\n", x, top+ph, x, top+ph+5)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%d" text-anchor="middle">%d</text>`+"\n", x, top+ph+18, tickSize, st.Cameras)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%d" text-anchor="middle">cameras</text>`+"\n", x0+pw/2, top+ph+36, labelSize)
		if panel.goal > 0 {
			y := ys(panel.goal)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#2a2" stroke-dasharray="6 4"/>`+"\n", x0, y, x0+pw, y)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%d" fill="#2a2" text-anchor="end">goal %s</text>`+"\n", x0+pw-4, y-4, tickSize, trimFloat(panel.goal))
		}
		for _, name := range []string{RecorderVigia, RecorderMediaMTX} {
			color := plotColors[name]
			var line []string
			for _, p := range pts {
				vs := panel.value(p)
				if p.recorder != name || len(vs) == 0 {
					continue
				}
				for _, v := range vs {
					fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s" fill-opacity="0.6"/>`+"\n", xs(float64(p.cameras)), ys(v), color)
				}
				line = append(line, fmt.Sprintf("%.1f,%.1f", xs(float64(p.cameras)), ys(median(vs))))
			}
			if len(line) > 1 {
				fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(line, " "), color)
			}
		}
	}
	ly := top + ph + 62
	lx := left
	for _, name := range []string{RecorderVigia, RecorderMediaMTX} {
		if _, ok := r.Capacity[name]; !ok {
			continue
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="5" fill="%s"/>`+"\n", lx, ly-4, plotColors[name])
		label := fmt.Sprintf("%s: capacity %d cameras (≥ %.1f %% of frames stored, latency p99 < %v)", name, r.Capacity[name], StoredTarget, LatencyTarget)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="%d">%s</text>`+"\n", lx+10, ly, labelSize, html.EscapeString(label))
		lx += 460
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// niceStep rounds a tick step up to 1, 2 or 5 times a power of ten.
func niceStep(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// niceCeil rounds v up to a multiple of a nice step.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	s := niceStep(v / 5)
	return math.Ceil(v/s) * s
}

// trimFloat formats a tick value without trailing zeros.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.4f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
