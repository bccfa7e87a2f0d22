package synth

import (
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// TestSchedule drives one camera's scheduler with injected times (the
// server's own ticker is set to an hour so it never fires) and checks which
// frames are due and which are sent.
func TestSchedule(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		setup     func(c *camera)
		until     time.Duration
		wantNext  int64 // video frames on the timeline
		wantSent  uint64
		wantAudio int64 // audio frames on the timeline
	}{
		{"15 fps for 2 s", func(c *camera) { c.playing = 1 }, 2 * time.Second, 31, 31, 32},
		{"no readers", func(*camera) {}, 2 * time.Second, 31, 0, 32},
		{"sent at 30 fps", func(c *camera) { c.playing = 1; c.sendFPS = 30 }, 2 * time.Second, 61, 61, 32},
		{"sent at 10 fps", func(c *camera) { c.playing = 1; c.sendFPS = 10 }, 2 * time.Second, 21, 21, 32},
		{"stalled first second", func(c *camera) {
			c.playing = 1
			c.stallTo = c.video.base.Add(time.Second)
		}, 2 * time.Second, 31, 16, 32},
		{"down", func(c *camera) { c.playing = 1; c.down = true }, 2 * time.Second, 31, 0, 32},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := NewServer(Config{Tick: time.Hour, Log: zaptest.NewLogger(t),
				Cameras: []CameraSpec{{Path: "x", Audio: true}}})
			if err := s.Start(); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c, err := s.camera("x")
			if err != nil {
				t.Fatal(err)
			}
			c.mu.Lock()
			tc.setup(c)
			base := c.video.base
			c.mu.Unlock()
			sch := newScheduler()
			for d := time.Duration(0); d <= tc.until; d += 50 * time.Millisecond {
				c.step(base.Add(d), sch)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.video.next != tc.wantNext {
				t.Errorf("video timeline at %d frames, want %d", c.video.next, tc.wantNext)
			}
			if c.frames != tc.wantSent {
				t.Errorf("sent %d frames, want %d", c.frames, tc.wantSent)
			}
			if c.aud.next != tc.wantAudio {
				t.Errorf("audio timeline at %d frames, want %d", c.aud.next, tc.wantAudio)
			}
			if c.video.pos != int(c.video.next)%len(c.clip.Units) {
				t.Errorf("clip position %d, want %d", c.video.pos, int(c.video.next)%len(c.clip.Units))
			}
		})
	}
}

func TestScheduleLagResets(t *testing.T) {
	t.Parallel()
	s := NewServer(Config{Tick: time.Hour, Cameras: []CameraSpec{{Path: "x"}}})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, _ := s.camera("x")
	sch := newScheduler()
	base := c.video.base
	// A process starved for 10 s does not burst 150 frames afterwards.
	c.step(base.Add(10*time.Second), sch)
	if c.lagSkips != 1 || c.video.next != 1 {
		t.Fatalf("after 10 s lag: %d resets, %d frames; want 1 reset, 1 frame", c.lagSkips, c.video.next)
	}
}

func TestRTPTime(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		initial uint32
		jump    time.Duration
		frame   int64
		want    uint32
	}{
		{"zero", 0, 0, 0, 0},
		{"frame 15", 1000, 0, 15, 1000 + 90000},
		{"wraps", 1<<32 - 3000, 0, 1, 3000},
		{"jump forward", 0, 10 * time.Second, 1, 6000 + 900000},
		{"jump back below zero", 0, -time.Second, 0, 1<<32 - 90000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &camera{spec: CameraSpec{InitialRTPTime: tc.initial}, fps: 15, jump: tc.jump}
			if got := c.rtpTime(c.videoTicks(tc.frame), videoClockRate); got != tc.want {
				t.Fatalf("rtpTime = %d, want %d", got, tc.want)
			}
		})
	}
}
