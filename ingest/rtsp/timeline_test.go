package rtsp

import (
	"testing"
	"time"

	"github.com/vigia/vigia/media"
)

// TestUnwrapperAbsorbsJumps: RTP timestamps of a stream with B-frames, in
// decoding order (presentation times going back and forth by up to three
// frames), wrapping past 2^32 and then jumping back an hour and forward a
// day, come out as a count of ticks that keeps the order and spacing of
// the frames: the wrap is invisible and each jump costs at most a frame.
func TestUnwrapperAbsorbsJumps(t *testing.T) {
	const frame = 6000 // 15 fps at 90 kHz
	// Presentation order offsets of a mini-GOP in decoding order: P, B, B, B.
	pattern := []int64{3, 1, 0, 2}
	jumps := map[int]int64{100: -3600 * 90000, 200: 24 * 3600 * 90000}
	start := uint32(1<<32 - 50*frame) // wraps after 50 frames
	var u *unwrapper
	var off int64
	var prev int64
	for i := range 300 {
		if j, ok := jumps[i]; ok {
			off += j
		}
		pts := int64(i/4*4)*frame + pattern[i%4]*frame
		ts := uint32(int64(start) + pts + off)
		now := time.Unix(1_700_000_000, 0).Add(time.Duration(i) * time.Second / 15)
		var got int64
		if u == nil {
			u = newUnwrapper(ts, now, 0, 90000)
		} else {
			got = u.next(ts, now, nil)
		}
		if i > 0 {
			want := pts - (int64((i-1)/4*4)*frame + pattern[(i-1)%4]*frame)
			if _, jumped := jumps[i]; jumped {
				if d := got - prev; d <= 0 || d > 4*frame {
					t.Fatalf("frame %d (a jump): step %d ticks, want one to four frames", i, d)
				}
			} else if d := got - prev; d != want {
				t.Fatalf("frame %d: step %d ticks, want %d", i, d, want)
			}
		}
		prev = got
	}
}

// TestUnwrapperCountsHoles: a track whose packets stop for longer than a
// jump's threshold and come back with the timestamps of their instants (a
// hole: frames lost, dropped until a keyframe, a stalled encoder) goes on
// by the whole hole, even one longer than a signed 32-bit step at 90 kHz
// (23.9 s), and whether its packets came on time or late; a step its
// arrivals do not account for is still a jump of the camera's clock.
func TestUnwrapperCountsHoles(t *testing.T) {
	const frame = 6000 // 15 fps at 90 kHz
	frameDur := time.Second / 15
	base := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		name    string
		step    time.Duration // from the last frame before to the first after
		arrival time.Duration // between their arrivals
		hole    bool
	}{
		{"3.8 s", 3800 * time.Millisecond, 3800 * time.Millisecond, true},
		{"3.8 s, the frame after it 1.5 s late", 3800 * time.Millisecond, 5300 * time.Millisecond, true},
		{"a minute", time.Minute, time.Minute, true},
		{"jump ahead an hour", time.Hour, frameDur, false},
		{"jump back 10 s", -10 * time.Second, frameDur, false},
		{"jump ahead 5 s during a 1 s hole", 5 * time.Second, time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := uint32(1<<32 - 20*frame)
			now := base
			u := newUnwrapper(ts, now, 0, 90000)
			var got int64
			for range 10 {
				ts += frame
				now = now.Add(frameDur)
				got = u.next(ts, now, nil)
			}
			before := got
			ts += uint32(durationToTicks(tc.step, 90000))
			now = now.Add(tc.arrival)
			step := u.next(ts, now, nil) - before
			switch want := durationToTicks(tc.step, 90000); {
			case tc.hole && step != want:
				t.Errorf("step %v, want the hole's %v", ticksToDuration(step, 90000), tc.step)
			case !tc.hole && (step <= 0 || step > 2*frame):
				t.Errorf("step %v, want a frame or two (a jump)", ticksToDuration(step, 90000))
			}
			ts += frame
			if d := u.next(ts, now.Add(frameDur), nil) - before - step; d != frame {
				t.Errorf("the frame after: step %d ticks, want %d", d, frame)
			}
		})
	}
}

// TestTimelinePlacesAudio: another track starts where the video stands
// when its first packet arrives, measured from the least delayed video
// frame; a second later it moves to where its least delayed frame puts it
// (a sender gathering audio frames into packets); the camera's sender
// reports, before or after its first packet, place it for good; reports
// that disagree by more than maxReportShift are left aside.
func TestTimelinePlacesAudio(t *testing.T) {
	const (
		frame = 6000 // 15 fps at 90 kHz
		rate  = 16000
	)
	base := time.Unix(1_700_000_000, 0)
	frameDur := time.Second / 15
	// ntp returns the NTP time of the camera's clock d after base.
	ntp := func(d time.Duration) uint64 {
		return media.NTPTime(base.Add(d))
	}
	const v0, a0 = 1000, 7000 // the tracks' first RTP times
	for _, tc := range []struct {
		name string
		// gathered: audio frames come five to a packet, sent when the
		// fifth is complete; else each frame 300 ms late (the sender's
		// latency, which arrival times cannot tell).
		gathered bool
		// reportAt is the frame before which the sender reports arrive
		// (-1: none); audioOff is how far they place audio off the video
		// (as a camera whose reports are wrong would).
		reportAt int
		audioOff time.Duration
		want     time.Duration // where the audio of the camera's second 1 lands
	}{
		{"arrival", false, -1, 0, time.Second + 295*time.Millisecond},
		{"gathered", true, -1, 0, time.Second},
		{"reports first", false, 0, 0, time.Second},
		{"reports later", false, 30, 0, time.Second},
		{"reports far off", false, 0, 10 * time.Second, time.Second + 295*time.Millisecond},
		{"reports shift", false, 0, 100 * time.Millisecond, time.Second + 100*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tl timeline
			var got int64
			for i := range 45 {
				if i == tc.reportAt {
					tl.senderReport(0, ntp(0), v0)
					tl.senderReport(1, ntp(tc.audioOff), a0)
				}
				// Keyframes arrive 80 ms late, the other frames 5 ms.
				late := 5 * time.Millisecond
				if i%15 == 0 {
					late = 80 * time.Millisecond
				}
				d := tl.videoTicks(uint32(v0+i*frame), base.Add(time.Duration(i)*frameDur))
				tl.videoDecoded(d, base.Add(time.Duration(i)*frameDur+late))
				// An audio frame a video frame long, from the camera's
				// second 1 on.
				if i >= 15 {
					at := time.Duration(i-15) * frameDur
					ts := uint32(a0 + rate + durationToTicks(at, rate))
					arrival := base.Add(time.Duration(i)*frameDur + 300*time.Millisecond)
					if tc.gathered {
						arrival = base.Add(time.Duration(15+(i-15)/5*5+4)*frameDur + 5*time.Millisecond)
					}
					got = tl.otherTicks(1, ts, rate, arrival) - durationToTicks(at, rate)
				}
			}
			want := durationToTicks(tc.want, rate)
			if d := got - want; d < -rate/100 || d > rate/100 {
				t.Errorf("audio of the camera's second 1 at %v, want %v", ticksToDuration(got, rate), ticksToDuration(want, rate))
			}
		})
	}
}
