package synth

import (
	"fmt"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"go.uber.org/zap"
)

// withCamera runs f with the camera of path locked.
func (s *Server) withCamera(path string, f func(c *camera)) error {
	c, err := s.camera(path)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
	return nil
}

func closeSessions(sessions []*gortsplib.ServerSession) {
	for _, ss := range sessions {
		ss.Close()
	}
}

// Drop closes every reader session of the camera now. The camera stays up:
// readers may reconnect at once.
func (s *Server) Drop(path string) error {
	var victims []*gortsplib.ServerSession
	err := s.withCamera(path, func(c *camera) {
		victims = c.takeSessions()
		c.log.Info("fault: drop readers", zap.Int("sessions", len(victims)))
	})
	closeSessions(victims)
	return err
}

// SetDown takes the camera down (down true) or brings it back. While down,
// DESCRIBE, SETUP and PLAY get 404, the current readers are disconnected and
// the timeline keeps running without sending.
func (s *Server) SetDown(path string, down bool) error {
	var victims []*gortsplib.ServerSession
	err := s.withCamera(path, func(c *camera) {
		c.down = down
		if down {
			victims = c.takeSessions()
		}
		c.log.Info("fault: set down", zap.Bool("down", down), zap.Int("dropped", len(victims)))
	})
	closeSessions(victims)
	return err
}

// Stall stops sending media for d while keeping the connections open. The
// timeline keeps running, so after the stall the timestamps show a gap of d.
func (s *Server) Stall(path string, d time.Duration) error {
	return s.withCamera(path, func(c *camera) {
		c.stallTo = time.Now().Add(d)
		c.log.Info("fault: stall", zap.Duration("for", d))
	})
}

// SetSmall switches the camera to the 640x360 clip (small true) or back to
// 1280x720. The switch happens on the next frame, which is a keyframe of the
// new clip with its new parameter sets in-band; new readers get the new
// parameter sets in the SDP.
func (s *Server) SetSmall(path string, small bool) error {
	return s.withCamera(path, func(c *camera) {
		c.setClip(small)
		c.log.Info("fault: set small", zap.Bool("small", small))
	})
}

// Garbage makes the camera send random RTP payloads (valid RTP headers,
// same sizes and timing) instead of media while on is true.
func (s *Server) Garbage(path string, on bool) error {
	return s.withCamera(path, func(c *camera) {
		c.garbage = on
		c.log.Info("fault: garbage", zap.Bool("on", on))
	})
}

// JumpTimestamps moves the RTP timestamps of every track of the camera by
// delta (forward or back) from the next frame on. Jumps add up.
func (s *Server) JumpTimestamps(path string, delta time.Duration) error {
	return s.withCamera(path, func(c *camera) {
		c.jump += delta
		c.log.Info("fault: jump timestamps", zap.Duration("delta", delta), zap.Duration("total", c.jump))
	})
}

// SetFrameRate makes the camera send fps frames per second of wall time
// while its timestamps and SPS keep the clip's rate, so media time runs
// faster or slower than real time. fps 0 restores the clip's rate.
func (s *Server) SetFrameRate(path string, fps float64) error {
	if fps < 0 || fps > 1000 {
		return fmt.Errorf("set frame rate %v: %w", fps, ErrBadSpec)
	}
	return s.withCamera(path, func(c *camera) {
		rate := c.fps
		if c.sendFPS > 0 {
			rate = c.sendFPS
		}
		// rebase so the next frame keeps its due time
		c.video.base, c.video.k = c.video.due(rate), 0
		c.sendFPS = fps
		c.log.Info("fault: frame rate", zap.Float64("declared", c.fps), zap.Float64("sent", fps))
	})
}

// FrameCount returns the number of video frames the camera has written to
// readers (frames due while it had no reader, was stalled or down are not
// counted).
func (s *Server) FrameCount(path string) (uint64, error) {
	var n uint64
	err := s.withCamera(path, func(c *camera) { n = c.frames })
	return n, err
}

// MediaTime returns the media time of the camera's timeline: the PTS of the
// next video frame, counted from the camera's start at the clip's frame rate
// (timestamp jumps not included). It grows whether or not anyone reads.
func (s *Server) MediaTime(path string) (time.Duration, error) {
	var d time.Duration
	err := s.withCamera(path, func(c *camera) {
		d = time.Duration(float64(c.video.next) * float64(time.Second) / c.fps)
	})
	return d, err
}

// Readers returns the number of sessions playing the camera.
func (s *Server) Readers(path string) (int, error) {
	var n int
	err := s.withCamera(path, func(c *camera) { n = c.playing })
	return n, err
}
