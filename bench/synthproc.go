package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vigia/vigia/synth"
)

// synthReadyTimeout bounds how long the synthetic cameras may take to start.
const synthReadyTimeout = 60 * time.Second

// synthProc is the child process serving the synthetic cameras, or the
// process of the caller's that serves them (Options.CameraURLs).
type synthProc struct {
	*child
	urls   []string
	extPID int // the caller's process; 0 for a child

	mu    sync.Mutex
	stats chan synth.FleetStats // the fleet's counters, asked for by fleetStats
}

// pid returns the id of the process serving the cameras.
func (s *synthProc) pid() int {
	if s.extPID > 0 {
		return s.extPID
	}
	return s.child.pid()
}

// stop stops the child; the caller's process is left alone.
func (s *synthProc) stop(grace time.Duration) {
	if s.extPID == 0 {
		s.child.stop(grace)
	}
}

// externalCameras stands for the caller's camera process.
func externalCameras(o Options) *synthProc {
	c := &child{name: "cameras of the caller", out: newOutBuffer(0), done: make(chan struct{})}
	return &synthProc{child: c, urls: o.CameraURLs, extPID: o.CameraPID}
}

// fleetStats asks the fleet child for its counters (SIGUSR1) and waits for
// them; nil when the cameras are not a fleet child or did not answer.
func (s *synthProc) fleetStats(timeout time.Duration) *synth.FleetStats {
	if s.extPID != 0 || s.stats == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select { // a late answer to an earlier question
	case <-s.stats:
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		return nil
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case st := <-s.stats:
		return &st
	case <-t.C:
		return nil
	case <-s.done:
		return nil
	}
}

// fleetStatsPrefix starts the line on which `vigia synthcam --fleet`
// prints its counters.
const fleetStatsPrefix = "fleet-stats "

// startSynth starts the synthetic cameras and waits until the child has
// printed one URL per camera.
func startSynth(ctx context.Context, o Options) (*synthProc, error) {
	if o.CameraURLs != nil {
		return externalCameras(o), nil
	}
	cmd, err := o.SynthCommand(ctx, o.Cameras, o.Codec, o.synthAudio())
	if err != nil {
		return nil, fmt.Errorf("synthetic cameras: %w", err)
	}
	if o.Fleet {
		cmd.Args = append(cmd.Args, "--fleet")
	}
	if o.Flap > 0 {
		cmd.Args = append(cmd.Args, fmt.Sprintf("--flap-fraction=%g", o.Flap),
			"--flap-every="+flapEvery.String(), "--flap-down="+flapDown.String())
	}
	// A pipe of our own rather than StdoutPipe: it is read until EOF
	// independently of Wait.
	stdout, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("synthetic cameras: %w", err)
	}
	cmd.Stdout = pw
	c, err := startChild("synthetic cameras", cmd)
	_ = pw.Close()
	if err != nil {
		_ = stdout.Close()
		return nil, err
	}
	s := &synthProc{child: c, stats: make(chan synth.FleetStats, 1)}
	urls := make(chan string)
	go func() { // exits at EOF of the child's output, when it exits
		defer stdout.Close()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if js, ok := strings.CutPrefix(line, fleetStatsPrefix); ok {
				var st synth.FleetStats
				if json.Unmarshal([]byte(js), &st) == nil {
					select {
					case s.stats <- st:
					default:
					}
				}
				continue
			}
			if strings.HasPrefix(line, "rtsp://") {
				select {
				case urls <- line:
					continue
				case <-c.done:
				}
			}
			_, _ = io.WriteString(c.out, line+"\n")
		}
	}()
	t := time.NewTimer(synthReadyTimeout)
	defer t.Stop()
	for len(s.urls) < o.Cameras {
		select {
		case u := <-urls:
			s.urls = append(s.urls, u)
		case <-c.done:
			return nil, c.exitError()
		case <-ctx.Done():
			c.stop(5 * time.Second)
			return nil, ctx.Err()
		case <-t.C:
			c.stop(5 * time.Second)
			return nil, fmt.Errorf("synthetic cameras: %d of %d URLs after %v; output:\n%s",
				len(s.urls), o.Cameras, synthReadyTimeout, c.out.String())
		}
	}
	return s, nil
}
