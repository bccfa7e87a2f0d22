package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// synthReadyTimeout bounds how long the synthetic cameras may take to start.
const synthReadyTimeout = 60 * time.Second

// synthProc is the child process serving the synthetic cameras.
type synthProc struct {
	*child
	urls []string
}

// startSynth starts the synthetic cameras and waits until the child has
// printed one URL per camera.
func startSynth(ctx context.Context, o Options) (*synthProc, error) {
	cmd, err := o.SynthCommand(ctx, o.Cameras, o.Codec, o.synthAudio())
	if err != nil {
		return nil, fmt.Errorf("synthetic cameras: %w", err)
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
	s := &synthProc{child: c}
	urls := make(chan string)
	go func() { // exits at EOF of the child's output, when it exits
		defer stdout.Close()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
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
