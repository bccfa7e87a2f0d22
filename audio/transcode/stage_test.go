//go:build cgo

package transcode

import (
	"testing"
	"time"

	"github.com/vigia/vigia/audio"
	"github.com/vigia/vigia/media"
)

// camera produces the units of a camera with H.264 video at 15 fps (a
// keyframe every 2 s) and G.711 µ-law in 20 ms packets, in the order they
// arrive, for secs seconds; audio stops during [stopFrom, stopTo).
func camera(secs float64, stopFrom, stopTo time.Duration) []*media.Unit {
	var out []*media.Unit
	pcm := audio.EncodeG711(nil, tone(160, 8000, 400, 0.2), true)
	v, a := 0, 0
	end := time.Duration(secs * float64(time.Second))
	for {
		vt := time.Duration(v) * time.Second / 15
		at := time.Duration(a) * 20 * time.Millisecond
		if vt >= end && at >= end {
			return out
		}
		if vt <= at {
			out = append(out, &media.Unit{Track: 0, PTS: vt, DTS: vt, Key: v%30 == 0, NALUs: [][]byte{{0x65}}})
			v++
			continue
		}
		if at < stopFrom || at >= stopTo {
			out = append(out, &media.Unit{Track: 1, PTS: at, DTS: at, Payload: pcm})
		}
		a++
	}
}

var cameraTracks = []*media.Track{{Codec: media.H264, ClockRate: 90000}, {Codec: media.G711U, ClockRate: 8000}}

// runStage passes units through a new Stage and returns what it emits,
// with the arrival index of the last unit taken before each.
func runStage(t *testing.T, units []*media.Unit) ([]*media.Track, []*media.Unit, []int) {
	t.Helper()
	var c Counters
	tracks, s, err := NewStage(cameraTracks, StageConfig{Counters: &c, OnError: func(err error) { t.Errorf("stage error: %v", err) }})
	if err != nil || s == nil {
		t.Fatalf("NewStage: %v, %v", s, err)
	}
	defer s.Close()
	var out []*media.Unit
	var at []int
	for i, u := range units {
		s.Unit(u, func(u *media.Unit) { out, at = append(out, u), append(at, i) })
	}
	s.Flush(func(u *media.Unit) { out, at = append(out, u), append(at, len(units)) })
	if st := c.Stats(); st.Frames == 0 || st.Audio == 0 || st.CPU == 0 {
		t.Errorf("counters %+v", st)
	}
	return tracks, out, at
}

// TestStageOrder: the G.711 track becomes AAC; units come out in time
// order, every video frame after the audio of its time and at most
// MaxHold late; nothing is lost.
func TestStageOrder(t *testing.T) {
	units := camera(10, 0, 0)
	tracks, out, at := runStage(t, units)
	if tracks[0] != cameraTracks[0] || tracks[1].Codec != media.AAC || tracks[1].ClockRate != 8000 {
		t.Fatalf("tracks %v %v", tracks[0], tracks[1])
	}
	video, aac := 0, 0
	var last time.Duration = -time.Hour
	for i, u := range out {
		// The first AAC frame, the encoder's priming, is timed before the
		// first audio: it follows the video frames that came before.
		if u.DTS < last && !(u.Track == 1 && u.DTS < 0) {
			t.Fatalf("unit %d (track %d) at %v after one at %v", i, u.Track, u.DTS, last)
		}
		last = max(last, u.DTS)
		if u.Track == 0 {
			video++
			// When it comes out, the units taken reach MaxHold past it.
			if at[i] < len(units) && units[at[i]].DTS-u.DTS > MaxHold {
				t.Fatalf("video frame at %v held until a unit at %v", u.DTS, units[at[i]].DTS)
			}
		} else {
			aac++
		}
	}
	if video != 150 || aac < 10*8000/1024 {
		t.Fatalf("%d video frames and %d AAC frames out, want 150 and %d", video, aac, 10*8000/1024)
	}
}

// TestStageAudioStops: while audio stops, video goes on MaxHold late;
// when it comes back, it is timed where it belongs.
func TestStageAudioStops(t *testing.T) {
	units := camera(12, 3*time.Second, 8*time.Second)
	_, out, at := runStage(t, units)
	video := 0
	var gapFrom, gapTo time.Duration
	var prev time.Duration = -time.Hour
	for i, u := range out {
		if u.Track == 0 {
			video++
			if at[i] < len(units) && units[at[i]].DTS-u.DTS > MaxHold+time.Second/15 {
				t.Fatalf("video frame at %v held until a unit at %v", u.DTS, units[at[i]].DTS)
			}
			continue
		}
		if u.DTS-prev > time.Second {
			gapFrom, gapTo = prev, u.DTS
		}
		prev = u.DTS
	}
	if video != 180 {
		t.Fatalf("%d video frames out, want 180", video)
	}
	if gapFrom < 2500*time.Millisecond || gapFrom > 3*time.Second || gapTo < 8*time.Second-130*time.Millisecond || gapTo > 8*time.Second+130*time.Millisecond {
		t.Fatalf("audio gap from %v to %v, want from about 3 s to 8 s", gapFrom, gapTo)
	}
}

// TestStageNothingToTranscode: AAC, or no audio, needs no Stage.
func TestStageNothingToTranscode(t *testing.T) {
	for _, tracks := range [][]*media.Track{
		{{Codec: media.H264}},
		{{Codec: media.H264}, {Codec: media.AAC, ClockRate: 16000}},
		{{Codec: media.H264}, {Codec: media.AAC, ClockRate: 16000}, {Codec: media.G711U, ClockRate: 8000}},
		{{Codec: media.H265}, {Codec: "G726", ClockRate: 8000}},
	} {
		out, s, err := NewStage(tracks, StageConfig{})
		if s != nil || err != nil || len(out) != len(tracks) || out[0] != tracks[0] {
			t.Errorf("NewStage(%v) = %v, %v, %v", tracks, out, s, err)
		}
	}
}

// TestTranscodeLostPackets: lost G.711 packets are filled with silence,
// so the AAC frames stay 1024 samples apart and the audio after the loss
// keeps its time.
func TestTranscodeLostPackets(t *testing.T) {
	b := audio.EncodeG711(nil, tone(8000*4, 8000, 440, 0.25), true)
	var units []*media.Unit
	for i, u := range g711Units(b, 160, 8000, 1) {
		if i%10 != 3 { // one packet in ten lost
			units = append(units, u)
		}
	}
	_, frames := run(t, &media.Track{Codec: media.G711U, ClockRate: 8000}, units)
	checkFrames(t, frames, 8000)
	if n := len(frames); n < 4*8000/1024 || n > 4*8000/1024+3 {
		t.Fatalf("%d frames for 4 s", n)
	}
}
