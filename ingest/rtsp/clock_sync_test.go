package rtsp

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
)

// TestReaderKeepsSoundWithLateVideo: a camera whose clock is right, whose
// sound (G.711, 20 ms packets) arrives on time and whose video arrives
// late, with sender reports of both tracks every second tied to the
// instants the camera captured them (as the synthetic camera of the
// browser tests on a loaded machine). The reader gives the sound and the
// video of one instant one presentation time, and keeps the camera's
// timestamps: a recording lasts as long as the camera's recording did.
//
// When the video arrived later and later (an encoder falling behind by
// 4.5 % of real time), mapped by its arrivals alone it passed for a camera
// whose clock ran 4.5 % slow and was stretched, and the sound, mapped as
// it arrived, seconds before the video of its time, got another mapping
// than that video. When the video started 9 s late and caught up, the
// sound was placed by arrival against it, 9 s early, for good: the
// reports, 9 s away from that, were taken for wrong.
func TestReaderKeepsSoundWithLateVideo(t *testing.T) {
	for _, tc := range []struct {
		name string
		// delay is the video's delay of the frame captured at at.
		delay func(at time.Duration) time.Duration
		// from is the first instant compared: the sound is placed.
		from time.Duration
	}{
		{"encoder falls behind 4.5 % a second", func(at time.Duration) time.Duration {
			return 50*time.Millisecond + time.Duration(float64(at)*0.045)
		}, 3 * time.Second},
		{"encoder starts 9 s behind and catches up", func(at time.Duration) time.Duration {
			return max(9400*time.Millisecond-at/2, 30*time.Millisecond)
		}, 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) { checkSoundWithVideo(t, tc.delay, tc.from, nil, nil) })
	}
}

// TestReaderKeepsSoundAfterAVideoHole: the video of a camera loses its
// frames for longer than a clock jump's threshold while its sound goes on
// (a packet of a keyframe lost, and the frames after it dropped until the
// next keyframe, twice in a row; a camera whose encoder stalls). The frames
// after the hole carry the timestamps of their instants, as the sound does:
// the sound and the video of one instant keep one presentation time.
//
// When the hole was taken for a jump of the camera's clock, the video's
// count went on one frame after the hole's start and the sound was placed
// the hole's length ahead of its video for the rest of the session: the
// first segment after the hole held no sound at all (interop matrix, a
// 3.8 s hole over UDP with packets lost).
//
// The reader may also stall (a loaded machine): every packet waits in its
// socket, the video's socket fills and loses what comes after, the sound's
// (a few kbit/s) holds all of it. The frames before the hole then arrive
// late, just before the frames after it: the arrivals do not account for
// the step, the sound, read out at once, does.
func TestReaderKeepsSoundAfterAVideoHole(t *testing.T) {
	onTime := func(time.Duration) time.Duration { return 50 * time.Millisecond }
	for _, hole := range []time.Duration{2 * time.Second, 3800 * time.Millisecond, 9 * time.Second} {
		t.Run(hole.String(), func(t *testing.T) {
			skip := func(at time.Duration) bool { return at > 10*time.Second && at < 10*time.Second+hole }
			checkSoundWithVideo(t, onTime, 3*time.Second, skip, nil)
		})
	}
	t.Run("reader stalled 5 s, the video's last 4 s lost", func(t *testing.T) {
		skip := func(at time.Duration) bool { return at >= 11*time.Second && at < 15*time.Second }
		// Read out in 50 ms, in order: what comes after is 50 ms late.
		hold := func(arrive time.Duration) time.Duration {
			switch {
			case arrive < 10*time.Second:
				return arrive
			case arrive < 15*time.Second:
				return 15*time.Second + (arrive-10*time.Second)/100
			}
			return arrive + 50*time.Millisecond
		}
		checkSoundWithVideo(t, onTime, 3*time.Second, skip, hold)
	})
}

// checkSoundWithVideo feeds a reader a camera's video, delayed by delay,
// and its sound and sender reports, on time; the video frames captured at
// an instant skip says (nil: none) are never delivered, and hold (nil:
// none) moves the arrivals of both tracks' packets (a reader that stalls).
func checkSoundWithVideo(t *testing.T, delay func(time.Duration) time.Duration, from time.Duration, skip func(time.Duration) bool, hold func(time.Duration) time.Duration) {
	const (
		v0, a0   = 90_000, 3_000_000 // the tracks' first RTP times
		vStep    = 3000              // 30 fps at 90 kHz
		aStep    = 160               // 20 ms at 8 kHz
		length   = 60 * time.Second
		aDelay   = 20 * time.Millisecond
		interval = time.Second / 30
	)
	base := time.Unix(1_700_000_000, 0)
	ntp := func(at time.Duration) uint64 {
		return media.NTPTime(base.Add(at))
	}
	type event struct {
		kind   int           // 0 video frame, 1 sound packet, 2 sender reports
		at     time.Duration // captured (sender reports: sent)
		arrive time.Duration
		ts     uint32
	}
	var events []event
	videoArrival := func(at time.Duration) time.Duration { return at + delay(at) }
	for k := 0; time.Duration(k)*interval < length; k++ {
		at := time.Duration(k) * interval
		if skip != nil && skip(at) {
			continue
		}
		events = append(events, event{kind: 0, at: at, arrive: videoArrival(at), ts: uint32(v0 + k*vStep)})
	}
	for n := 0; time.Duration(n)*20*time.Millisecond < length+5*time.Second; n++ {
		at := time.Duration(n) * 20 * time.Millisecond
		events = append(events, event{kind: 1, at: at, arrive: at + aDelay, ts: uint32(a0 + n*aStep)})
	}
	for s := time.Second; s < length; s += time.Second {
		events = append(events, event{kind: 2, at: s, arrive: s})
	}
	if hold != nil {
		for i := range events {
			if events[i].kind != 2 {
				events[i].arrive = hold(events[i].arrive)
			}
		}
	}
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.arrive, b.arrive) })

	r := &reader{}
	video := map[time.Duration]time.Duration{} // output by the instant captured
	sound := map[time.Duration]time.Duration{}
	var lastVideo, lastSound event // the last of each sent (for the reports)
	for _, e := range events {
		now := base.Add(e.arrive)
		switch e.kind {
		case 0:
			pt := r.videoTicks(e.ts, now)
			pts, _, _ := r.videoTimes(pt, pt, now)
			video[e.at.Round(time.Millisecond)] = pts
			lastVideo = e
		case 1:
			if pts, _, ok := r.otherTime(1, e.ts, 8000, now); ok {
				sound[e.at.Round(time.Millisecond)] = pts
			}
			lastSound = e
		case 2:
			// As the synthetic camera: each track's last packet sent with
			// the instant it was captured.
			if lastSound.arrive > 0 {
				r.senderReport(1, ntp(lastSound.at), lastSound.ts)
			}
			if lastVideo.arrive > 0 {
				r.senderReport(0, ntp(lastVideo.at), lastVideo.ts)
			}
		}
	}
	var worst time.Duration
	n := 0
	for at, v := range video {
		if s, ok := sound[at]; ok && at >= from {
			n++
			if absDuration(s-v) > absDuration(worst) {
				worst = s - v
			}
		}
	}
	if n < 300 {
		t.Fatalf("%d instants with both sound and video, want more", n)
	}
	if worst > 2*time.Millisecond || worst < -2*time.Millisecond {
		t.Errorf("sound and video of one instant apart by up to %v, want ≤ 2 ms", worst)
	}
	first, last := 30*time.Second, (length - interval).Round(time.Millisecond)
	if got, want := video[last]-video[first], last-first; absDuration(got-want) > time.Millisecond {
		t.Errorf("the last %v of the camera's video last %v (rate %.4f, %d corrections)", want, got, r.clock.Rate(), r.clock.Corrections())
	}
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
