package rtsp

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
)

// TestOfflineCamerasCost runs supervisors of 1,000 RTSP cameras whose
// ports on 127.0.0.1 are closed, with the recorder's defaults, and counts
// what they cost once the first failures are past: RTSP sessions
// attempted and liveness probes (TCP connections) per second. During the
// fast retries (the first 2 minutes of an outage) each camera asks for a
// session a second, which the node's connection rate (200/s) caps; past
// them, each is probed once a second and no session is attempted while
// its port is closed.
// VIGIA_OFFLINE_CAMERAS changes the number of cameras.
func TestOfflineCamerasCost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 1,000 supervisors for several seconds")
	}
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("VIGIA_OFFLINE_CAMERAS")); err == nil && v > 0 {
		n = v
	}
	ports := closedPorts(t, n)
	for _, phase := range []struct {
		name    string
		fastFor time.Duration
	}{
		{"fast retries", 0},
		{"probes", -1},
	} {
		t.Run(phase.name, func(t *testing.T) {
			var attempts, probes atomic.Int64
			limiter := rate.NewLimiter(200, 200)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for i, port := range ports {
				cam := ingest.Camera{ID: fmt.Sprintf("c%d", i), URL: fmt.Sprintf("rtsp://127.0.0.1:%d/s", port), Trusted: true}
				sup := ingest.NewSupervisor(ingest.SupervisorConfig{
					Camera:    cam.ID,
					NewSource: func() (ingest.Source, error) { return New(cam, ingest.SourceConfig{}, nil), nil },
					Sink:      discard{},
					OnAttempt: func() { attempts.Add(1) },
					OnProbe:   func(bool) { probes.Add(1) },
					Limiter:   limiter,
					FastFor:   phase.fastFor,
				})
				wg.Go(func() { sup.Run(ctx) })
			}
			// Past the first attempts (n at the limiter's rate), count a
			// window.
			time.Sleep(time.Duration(n/200+2) * time.Second)
			// The window is timed, not assumed: on a loaded machine the
			// sleep lasts longer than asked.
			const window = 5 * time.Second
			a0, p0, t0 := attempts.Load(), probes.Load(), time.Now()
			time.Sleep(window)
			na, np, el := attempts.Load()-a0, probes.Load()-p0, time.Since(t0).Seconds()
			a, p := float64(na)/el, float64(np)/el
			cancel()
			wg.Wait()
			t.Logf("%d offline cameras, %s: %.1f sessions attempted/s, %.0f probes/s (%d and %d in %.2f s)", n, phase.name, a, p, na, np, el)
			// The limiter (a token bucket of 200/s, 200 deep) lets through
			// at most its rate over the window and what it had saved.
			if float64(na) > 200*el+200 {
				t.Errorf("%d sessions attempted in %.2f s (%.0f/s), want at most the connection rate (200/s) and the limiter's burst (200)", na, el, a)
			}
			if phase.fastFor < 0 && a > float64(n)/60 {
				t.Errorf("%.0f sessions attempted/s, want fewer than one a minute per camera: no session while the port is closed", a)
			}
			if phase.fastFor >= 0 && p != 0 {
				t.Errorf("%.0f probes/s during the fast retries, want none", p)
			}
			if p > 1.3*float64(n) {
				t.Errorf("%.0f probes/s, want at most about one per camera and second", p)
			}
		})
	}
}

// closedPorts returns n TCP ports of 127.0.0.1 that nothing listens on.
func closedPorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	ports := make([]int, n)
	for i, l := range ls {
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	return ports
}

// discard is a sink that drops everything.
type discard struct{}

func (discard) Tracks([]*media.Track) error { return nil }
func (discard) Unit(*media.Unit)            {}
