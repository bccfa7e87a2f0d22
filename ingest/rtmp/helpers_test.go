package rtmp

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

// collector is a sink that keeps what it receives.
type collector struct {
	mu     sync.Mutex
	tracks [][]*media.Track
	units  []*media.Unit
}

func (c *collector) Tracks(t []*media.Track) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tracks = append(c.tracks, t)
	return nil
}

func (c *collector) Unit(u *media.Unit) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.units = append(c.units, u)
}

// counts returns the video and audio units received.
func (c *collector) counts() (video, audio int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, u := range c.units {
		if u.Payload != nil {
			audio++
		} else {
			video++
		}
	}
	return
}

func (c *collector) lastTracks() []*media.Track {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.tracks) == 0 {
		return nil
	}
	return c.tracks[len(c.tracks)-1]
}

// runSource runs src in the background until the test ends; the returned
// channel gets Run's result.
func runSource(t *testing.T, run func(ctx context.Context) error) (context.CancelFunc, <-chan error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-finished
	})
	return cancel, done
}

// runPush runs cam's push source on s into sink until the test ends and
// returns once the camera is registered on s, so that a publisher that
// connects next is taken rather than refused as not recorded here.
func runPush(t *testing.T, s *Server, cam ingest.Camera, sink ingest.Sink) {
	t.Helper()
	src := NewPushSource(s, cam)
	runSource(t, func(ctx context.Context) error { return src.Run(ctx, sink) })
	testenv.WaitFor(t, 5*time.Second, "push slot of "+cam.ID, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.slots[cam.ID] != nil
	})
}
