package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// WebRTCPhase is the cost of one set of WebRTC viewers, measured on the
// recorder while they watch, against the recording window before.
type WebRTCPhase struct {
	Name      string `json:"name"`
	Viewers   int    `json:"viewers"`
	Cameras   int    `json:"cameras"`
	Connected int    `json:"connected"`
	// RecorderCPUPercent is the recorder's CPU while they watched, in % of
	// one core; BaselineCPUPercent its CPU with no viewer right before
	// (Options.WebRTCBaseline; the recording window's when 0);
	// CPUPercentPerViewer the difference divided by the viewers.
	RecorderCPUPercent  float64 `json:"recorder_cpu_percent"`
	BaselineCPUPercent  float64 `json:"baseline_cpu_percent"`
	CPUPercentPerViewer float64 `json:"cpu_percent_per_viewer"`
	// RSSPerViewerMiB is how much the recorder's resident set grew from
	// before the viewers connected to the end of the window, per viewer.
	RSSPerViewerMiB float64 `json:"rss_per_viewer_mib"`
	// FramesPerViewer is the mean of the frames each viewer received in
	// the window; LostPackets the packets missing from the viewers'
	// sequences (a viewer's own drops).
	FramesPerViewer float64 `json:"frames_per_viewer"`
	LostPackets     int64   `json:"lost_packets"`
	// GRO is whether the viewers' sockets took the node's runs whole.
	GRO bool `json:"gro"`
	// UDPRcvbufErrors is the machine's count of UDP datagrams dropped for a
	// full receive buffer during the window (/proc/net/snmp), -1 unknown:
	// where the viewers' lost packets went.
	UDPRcvbufErrors int64   `json:"udp_rcvbuf_errors"`
	WindowS         float64 `json:"window_s"`
	Err             string  `json:"error,omitempty"`
}

// SelfViewersCommand runs this executable's `whep-viewers` subcommand.
func SelfViewersCommand(urls []string, window time.Duration, gro bool) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	cmd := exec.Command(exe, "whep-viewers", "--window", window.String(), "--gro="+strconv.FormatBool(gro))
	cmd.Stdin = strings.NewReader(strings.Join(urls, "\n") + "\n")
	return cmd, nil
}

// measureWebRTC runs the WebRTC phases after the measured window: one
// viewer of the first camera, WebRTCViewers viewers of it (with the
// viewers' sockets taking runs whole, then plain), and one viewer on each
// of the first WebRTCViewers cameras.
func (r *run) measureWebRTC(ctx context.Context, cameras []string) []WebRTCPhase {
	n := r.o.WebRTCViewers
	if n <= 0 || len(cameras) == 0 {
		return nil
	}
	exp := time.Now().Add(time.Hour)
	same := make([]string, n)
	for i := range same {
		same[i] = r.app.WHEPURL(cameras[0], exp)
	}
	var each []string
	for _, c := range cameras[:min(n, len(cameras))] {
		each = append(each, r.app.WHEPURL(c, exp))
	}
	gro := !r.o.WebRTCPlainSockets
	type phase struct {
		name    string
		urls    []string
		cameras int
		gro     bool
	}
	phases := []phase{
		{"one viewer of one camera", same[:1], 1, gro},
		{fmt.Sprintf("%d viewers of one camera", n), same, 1, gro},
	}
	if gro {
		phases = append(phases, phase{fmt.Sprintf("%d viewers of one camera, plain sockets", n), same, 1, false})
	}
	phases = append(phases, phase{fmt.Sprintf("one viewer on each of %d cameras", len(each)), each, len(each), gro})
	var out []WebRTCPhase
	for _, p := range phases {
		r.progress("WebRTC: %s for %v", p.name, r.o.WebRTCWindow)
		ph := r.webrtcPhase(ctx, p.urls, p.gro)
		ph.Name, ph.Cameras = p.name, p.cameras
		out = append(out, ph)
	}
	return out
}

// baselineCPU returns the recorder's CPU over Options.WebRTCBaseline from
// now, in % of one core; the recording window's when that is 0.
func (r *run) baselineCPU(ctx context.Context) float64 {
	d := r.o.WebRTCBaseline
	if d <= 0 {
		return r.recordingCPUPercent
	}
	cpu0, err := selfCPU()
	start := time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	cpu1, err1 := selfCPU()
	if err != nil || err1 != nil {
		return r.recordingCPUPercent
	}
	return 100 * (cpu1 - cpu0).Seconds() / time.Since(start).Seconds()
}

// webrtcPhase measures the recorder with no viewer, then while a viewers
// process watches urls.
func (r *run) webrtcPhase(ctx context.Context, urls []string, gro bool) WebRTCPhase {
	ph := WebRTCPhase{Viewers: len(urls), WindowS: r.o.WebRTCWindow.Seconds(), GRO: gro}
	ph.BaselineCPUPercent = r.baselineCPU(ctx)
	cmd, err := r.o.ViewersCommand(urls, r.o.WebRTCWindow, gro)
	if err != nil {
		ph.Err = err.Error()
		return ph
	}
	rss0, _ := procRSS(0)
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	ch, err := startChild("webrtc viewers", cmd)
	if err != nil {
		ph.Err = err.Error()
		return ph
	}
	defer ch.stop(5 * time.Second)
	go func() { <-ch.done; pw.Close() }()
	lines := bufio.NewScanner(pr)
	lines.Buffer(make([]byte, 1<<16), 1<<20)
	for lines.Scan() && lines.Text() != connectedLine {
	}
	if ctx.Err() != nil || ch.exited() {
		ph.Err = ch.exitError().Error()
		return ph
	}
	cpu0, _ := selfCPU()
	udp0 := udpRcvbufErrors()
	start := time.Now()
	var rep ViewersReport
	if !lines.Scan() || json.Unmarshal(lines.Bytes(), &rep) != nil {
		<-ch.done
		ph.Err = ch.exitError().Error()
		return ph
	}
	el := time.Since(start)
	cpu1, _ := selfCPU()
	rss1, _ := procRSS(0)
	ph.UDPRcvbufErrors = -1
	if udp1 := udpRcvbufErrors(); udp0 >= 0 && udp1 >= 0 {
		ph.UDPRcvbufErrors = udp1 - udp0
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	ph.Connected, ph.LostPackets = rep.Connected, rep.LostPackets
	var frames int64
	for _, f := range rep.Frames {
		frames += f
	}
	if len(rep.Frames) > 0 {
		ph.FramesPerViewer = float64(frames) / float64(len(rep.Frames))
	}
	ph.RecorderCPUPercent = 100 * (cpu1 - cpu0).Seconds() / el.Seconds()
	ph.CPUPercentPerViewer = (ph.RecorderCPUPercent - ph.BaselineCPUPercent) / float64(len(urls))
	ph.RSSPerViewerMiB = mib(rss1-rss0) / float64(len(urls))
	return ph
}

// udpRcvbufErrors returns the machine's UDP RcvbufErrors counter, -1 when
// it cannot be read.
func udpRcvbufErrors() int64 {
	b, err := os.ReadFile("/proc/net/snmp")
	if err != nil {
		return -1
	}
	return parseUDPRcvbufErrors(string(b))
}

// parseUDPRcvbufErrors reads RcvbufErrors from /proc/net/snmp's two Udp:
// lines (names, then values); -1 when absent.
func parseUDPRcvbufErrors(snmp string) int64 {
	var names []string
	for line := range strings.Lines(snmp) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "Udp:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if n == "RcvbufErrors" && i < len(f) {
				v, err := strconv.ParseInt(f[i], 10, 64)
				if err != nil {
					return -1
				}
				return v
			}
		}
		return -1
	}
	return -1
}
