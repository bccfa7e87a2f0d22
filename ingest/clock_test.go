package ingest

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// feed runs a camera through c: frames every step of wall time, whose
// media timestamps advance by mediaStep, with jump added to every media
// timestamp from frame jumpAt on. It returns the output timestamps.
func feed(c *Clock, frames int, step, mediaStep time.Duration, jumpAt int, jump time.Duration) []time.Duration {
	t0 := time.Unix(1_700_000_000, 0)
	out := make([]time.Duration, frames)
	for i := range frames {
		pts := time.Duration(i) * mediaStep
		if i >= jumpAt {
			pts += jump
		}
		out[i] = c.Video(pts, t0.Add(time.Duration(i)*step))
	}
	return out
}

func TestClock(t *testing.T) {
	const fps = 25
	step := time.Second / fps
	cases := []struct {
		name      string
		mediaStep time.Duration
		jumpAt    int
		jump      time.Duration
		jumps     int
		scaled    bool
	}{
		{name: "healthy camera", mediaStep: step, jumpAt: 1 << 30},
		{name: "jump back an hour", mediaStep: step, jumpAt: 500, jump: -time.Hour, jumps: 1},
		{name: "jump forward a day", mediaStep: step, jumpAt: 500, jump: 24 * time.Hour, jumps: 1},
		{name: "small jump forward", mediaStep: step, jumpAt: 500, jump: 4 * time.Second, jumps: 1},
		{name: "declares 25 sends 21", mediaStep: step * 21 / 25, jumpAt: 1 << 30, scaled: true},
		{name: "declares 21 sends 25", mediaStep: step * 25 / 21, jumpAt: 1 << 30, scaled: true},
		{name: "runs 2 % slow", mediaStep: step * 98 / 100, jumpAt: 1 << 30, scaled: true},
		{name: "runs 2 % fast", mediaStep: step * 102 / 100, jumpAt: 1 << 30, scaled: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Clock{}
			const frames = 120 * fps
			out := feed(c, frames, step, tc.mediaStep, tc.jumpAt, tc.jump)
			for i := 1; i < len(out); i++ {
				if d := out[i] - out[i-1]; d <= 0 || d > 2*step {
					t.Fatalf("frame %d: output step %v (want > 0, about %v)", i, d, step)
				}
			}
			if c.Jumps() != tc.jumps {
				t.Errorf("%d jumps, want %d", c.Jumps(), tc.jumps)
			}
			if !tc.scaled && c.Rate() != 1 {
				t.Errorf("rate %v, want 1", c.Rate())
			}
			// Over the last minute, output time runs with wall time within 1 %.
			wall := time.Duration(60*fps) * step
			got := out[frames-1] - out[frames-1-60*fps]
			if e := math.Abs(float64(got-wall)) / float64(wall); e > 0.01 {
				t.Errorf("last minute: %v of output for %v of wall time (%.2f %%)", got, wall, e*100)
			}
			// And it stays aligned with the local clock.
			if lag := time.Duration(frames-1)*step - out[frames-1]; lag > 500*time.Millisecond || lag < -500*time.Millisecond {
				t.Errorf("output %v behind the local clock at the end", lag)
			}
		})
	}
}

func TestClockMapsAudioWithVideo(t *testing.T) {
	c := &Clock{}
	t0 := time.Unix(1_700_000_000, 0)
	c.Video(10*time.Second, t0)
	c.Video(10*time.Second+time.Second, t0.Add(time.Second))
	if got := c.Map(10*time.Second + 500*time.Millisecond); got != 500*time.Millisecond {
		t.Errorf("audio at media 10.5 s maps to %v, want 500ms", got)
	}
	if w := c.Wall(time.Second); !w.Equal(t0.Add(time.Second)) {
		t.Errorf("wall of output 1 s: %v", w)
	}
}

func FuzzClock(f *testing.F) {
	f.Add(int64(0), int64(40), int64(40), uint16(100), int64(0))
	f.Add(int64(1<<40), int64(40), int64(33), uint16(900), int64(-3_600_000))
	f.Add(int64(-5), int64(1), int64(1_000_000), uint16(3), int64(86_400_000))
	f.Fuzz(func(t *testing.T, start, stepMs, mediaMs int64, n uint16, jumpMs int64) {
		if stepMs <= 0 || stepMs > 10_000 || mediaMs < -10_000 || mediaMs > 10_000_000 {
			return
		}
		c := &Clock{}
		t0 := time.Unix(1_700_000_000, 0)
		var last time.Duration
		for i := range int64(n) {
			pts := time.Duration(start+i*mediaMs) * time.Millisecond
			if i > int64(n)/2 {
				pts += time.Duration(jumpMs) * time.Millisecond
			}
			now := t0.Add(time.Duration(i*stepMs) * time.Millisecond)
			o := c.Video(pts, now)
			_ = c.Map(pts)
			_ = c.Other(pts+time.Duration(i%7)*time.Millisecond, now)
			// Output never runs far from the local clock once it stepped.
			if lag := now.Sub(c.Wall(o)); lag > c.JumpAfter+time.Duration(stepMs)*time.Millisecond*2 && i > 0 && mediaMs > 0 {
				t.Fatalf("frame %d: output %v behind the local clock", i, lag)
			}
			last = o
		}
		_ = last
	})
}

// TestClockIgnoresStalls: a healthy camera whose frames now and then
// arrive late and then in a burst (an encoder or network stall of 600 ms,
// right where the rate is measured) keeps its own timestamps: a stall is
// not a wrong rate.
func TestClockIgnoresStalls(t *testing.T) {
	const fps = 15
	step := time.Second / fps
	t0 := time.Unix(1_700_000_000, 0)
	c := &Clock{}
	for i := range 120 * fps {
		pts := time.Duration(i) * step
		arrive := pts
		// Frames of the 600 ms before each 10th second arrive with the
		// first frame after it.
		if s := pts % (10 * time.Second); s >= 10*time.Second-600*time.Millisecond {
			arrive = pts - s + 10*time.Second
		}
		if o := c.Video(pts, t0.Add(arrive)); o != pts {
			t.Fatalf("frame %d: output %v, want the camera's %v (rate %v)", i, o, pts, c.Rate())
		}
	}
	if c.Corrections() != 0 || c.Jumps() != 0 {
		t.Errorf("%d corrections and %d jumps, want none", c.Corrections(), c.Jumps())
	}
}

// TestClockIgnoresDelaySteps: a healthy camera whose frames arrive later
// from some moment on keeps its own timestamps: a step of the delay is not
// a wrong rate. The first case is what FFmpeg's RTP muxer publishing H.264
// with B-frames gave the clock in the interop matrix
// (testdata/clock_ffmpeg_bframes.txt): the DTS extractor gives the first
// keyframe its presentation time as decoding time and the next two frames
// decoding times 1 ms apart until it knows the reorder delay (2 frames),
// so from the third frame on frames arrive two frame intervals later
// against the first one, 67 ms against the second. Measured from the
// second frame to the least delayed one 5.7 s later, the camera passed for
// 1.2 % slow and 10 s of it were stretched by 2.4 %. The second case is a
// network that queues 300 ms more from the fourth second on.
func TestClockIgnoresDelaySteps(t *testing.T) {
	type frame struct{ dts, arrive time.Duration }
	var ffmpeg []frame
	b, err := os.ReadFile("testdata/clock_ffmpeg_bframes.txt")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		var ticks, us int64
		if strings.HasPrefix(line, "#") {
			continue
		}
		if _, err := fmt.Sscan(line, &ticks, &us); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		ffmpeg = append(ffmpeg, frame{time.Duration(ticks) * time.Second / 90000, time.Duration(us) * time.Microsecond})
	}
	const fps = 15
	step := time.Second / fps
	var queued []frame
	for i := range 60 * fps {
		dts := time.Duration(i) * step
		arrive := dts + 20*time.Millisecond + time.Duration(i*7%9)*time.Millisecond
		if dts >= 4*time.Second {
			arrive += 300 * time.Millisecond
		}
		queued = append(queued, frame{dts, arrive})
	}
	t0 := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		name   string
		frames []frame
	}{
		{"FFmpeg with B-frames", ffmpeg},
		{"network queues 300 ms more", queued},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Clock{}
			for i, f := range tc.frames {
				if o := c.Video(f.dts, t0.Add(f.arrive)); o != f.dts {
					t.Fatalf("frame %d: output %v, want the camera's %v (rate %v)", i, o, f.dts, c.Rate())
				}
			}
			if c.Corrections() != 0 || c.Jumps() != 0 {
				t.Errorf("%d corrections and %d jumps, want none", c.Corrections(), c.Jumps())
			}
		})
	}
}

// clockEvent is a video frame or a sound packet arriving at the clock.
type clockEvent struct {
	video  bool
	pts    time.Duration // on the video's media axis
	arrive time.Duration // after the start
}

// feedTracks runs events through c in their order of arrival and returns
// the output of each sound packet and video frame by media time.
func feedTracks(c *Clock, events []clockEvent) (sound, video map[time.Duration]time.Duration) {
	slices.SortStableFunc(events, func(a, b clockEvent) int { return cmp.Compare(a.arrive, b.arrive) })
	t0 := time.Unix(1_700_000_000, 0)
	sound, video = map[time.Duration]time.Duration{}, map[time.Duration]time.Duration{}
	for _, e := range events {
		if e.video {
			video[e.pts] = c.Video(e.pts, t0.Add(e.arrive))
		} else if c.Started() {
			// Sound before the first video frame is dropped.
			sound[e.pts] = c.Other(e.pts, t0.Add(e.arrive))
		}
	}
	return sound, video
}

// TestClockKeepsTracksTogether: a camera's sound and video of one instant
// get one output time, whichever arrives first and whatever the clock
// corrects meanwhile; and a camera whose clock is right keeps its
// timestamps when its video arrives later and later (an encoder falling
// behind: the synthetic camera of the browser tests on a loaded machine)
// or late and then in a burst, while its sound arrives on time: the
// sound's arrivals show the camera's clock is right. Without them the
// video's growing delay passed for a clock 4.5 % slow, and the sound,
// mapped on arrival, seconds before the video of its time, got another
// mapping than that video.
func TestClockKeepsTracksTogether(t *testing.T) {
	const (
		frame  = 40 * time.Millisecond // 25 fps
		packet = 20 * time.Millisecond
		length = 90 * time.Second
	)
	for _, tc := range []struct {
		name string
		// mediaRate is the camera's clock against the local clock.
		mediaRate float64
		// videoDelay and soundDelay are the delays of a frame or packet
		// made at wall time w (after the start).
		videoDelay, soundDelay func(w time.Duration) time.Duration
		scaled                 bool // the camera's clock is off: scaled
	}{
		{
			name:       "encoder falls behind 4.5 % a second",
			mediaRate:  1,
			videoDelay: func(w time.Duration) time.Duration { return 50*time.Millisecond + w*45/1000 },
			soundDelay: func(time.Duration) time.Duration { return 20 * time.Millisecond },
		},
		{
			name:      "encoder stalls and catches up",
			mediaRate: 1,
			videoDelay: func(w time.Duration) time.Duration {
				// 1.5 s behind over 12 s, caught up over the next 12.
				p := w % (24 * time.Second)
				if p < 12*time.Second {
					return 30*time.Millisecond + p/8
				}
				return 30*time.Millisecond + (24*time.Second-p)/8
			},
			soundDelay: func(time.Duration) time.Duration { return 20 * time.Millisecond },
		},
		{
			name:       "clock 2 % slow, video 1 s behind the sound",
			mediaRate:  0.98,
			videoDelay: func(time.Duration) time.Duration { return time.Second },
			soundDelay: func(time.Duration) time.Duration { return 20 * time.Millisecond },
			scaled:     true,
		},
		{
			name:       "clock 3 % fast, video 2 s behind the sound",
			mediaRate:  1.03,
			videoDelay: func(time.Duration) time.Duration { return 2 * time.Second },
			soundDelay: func(time.Duration) time.Duration { return 20 * time.Millisecond },
			scaled:     true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var events []clockEvent
			media := func(w time.Duration) time.Duration { return time.Duration(float64(w) * tc.mediaRate) }
			// The sound goes on until the last frames arrived.
			for w := time.Duration(0); w < length+5*time.Second; w += frame {
				if w < length {
					events = append(events, clockEvent{video: true, pts: media(w), arrive: w + tc.videoDelay(w)})
				}
				for p := w; p < w+frame; p += packet {
					events = append(events, clockEvent{pts: media(p), arrive: p + tc.soundDelay(p)})
				}
			}
			c := &Clock{}
			sound, video := feedTracks(c, events)
			var worst time.Duration
			for pts, v := range video {
				if s, ok := sound[pts]; ok && absDuration(s-v) > absDuration(worst) {
					worst = s - v
				}
			}
			if worst > time.Millisecond || worst < -time.Millisecond {
				t.Errorf("sound and video of one instant apart by up to %v, want ≤ 1 ms (%d corrections, rate %.4f)", worst, c.Corrections(), c.Rate())
			}
			if c.Jumps() != 0 {
				t.Errorf("%d jumps, want none", c.Jumps())
			}
			// Durations true to the wall clock: over the last 30 s of the
			// camera's time, within 1 % (a camera whose clock is right:
			// exactly its own).
			last := media(length - frame)
			first := media(length - 30*time.Second)
			got, want := video[last]-video[first], 30*time.Second-frame
			if !tc.scaled {
				want = last - first
				if got != want || c.Corrections() != 0 {
					t.Errorf("%v of output for %v of the camera's time, %d corrections (rate %.4f); want its own timestamps", got, want, c.Corrections(), c.Rate())
				}
			} else if e := math.Abs(float64(got-want)) / float64(want); e > 0.01 {
				t.Errorf("%v of output for %v of wall time (%.2f %%)", got, want, e*100)
			}
		})
	}
}
