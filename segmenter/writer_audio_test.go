package segmenter

import (
	"os"
	"testing"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4"
	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// spans are the presentation spans of a stored segment's tracks, seconds
// from the file's zero.
type spans struct {
	videoStart, videoEnd float64
	audioStart, audioEnd float64
	audioSamples         int
}

// trackSpans parses a segment written by the Writer.
func trackSpans(t *testing.T, path string, audioRate float64) spans {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	initEnd, _ := layout(t, b)
	var parts fmp4.Parts
	if err := parts.Unmarshal(b[initEnd:]); err != nil {
		t.Fatal(err)
	}
	sp := spans{videoStart: -1, audioStart: -1}
	for _, p := range parts {
		for _, pt := range p.Tracks {
			at := pt.BaseTime
			for _, s := range pt.Samples {
				if pt.ID == 1 {
					pts := float64(int64(at)+int64(s.PTSOffset)) / 90000
					if sp.videoStart < 0 || pts < sp.videoStart {
						sp.videoStart = pts
					}
					sp.videoEnd = max(sp.videoEnd, pts+float64(s.Duration)/90000)
				} else {
					if sp.audioStart < 0 {
						sp.audioStart = float64(at) / audioRate
					}
					sp.audioEnd = float64(at+uint64(s.Duration)) / audioRate
					sp.audioSamples++
				}
				at += uint64(s.Duration)
			}
		}
	}
	return sp
}

// TestWriterAudioFollowsPresentation: audio goes to the segment whose
// video is presented at its time, however far ahead of the video, or after
// it, it arrives. A camera presents each frame 133 ms after decoding it
// (B-frames) and sends its audio 300 ms ahead of the video of the same
// time (video encodes more slowly), or 400 ms after it (a sender gathering
// audio frames into packets): each segment's audio starts where its first
// frame is presented and ends where the next segment's first frame is,
// within an audio frame, and no audio frame after the first keyframe is
// lost or stored twice. Before, audio went to whatever segment was open
// when it arrived: the next segment's first 433 ms of early audio were
// stored at the end of the segment before, and late audio for the end of
// a segment was dropped.
func TestWriterAudioFollowsPresentation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ahead time.Duration
	}{
		{"early", 300 * time.Millisecond},
		{"late", -400 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) { audioFollowsPresentation(t, tc.ahead) })
	}
}

func audioFollowsPresentation(t *testing.T, ahead time.Duration) {
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := synth.AudioFixture()
	if err != nil {
		t.Fatal(err)
	}
	vt, at := clip.Track(), ac.Track()
	rate := float64(at.AAC.SampleRate)
	const (
		fps   = 15
		delay = 2 * time.Second / fps // presentation after decoding
	)
	frames := 3 * clip.GOP() // a segment per GOP
	frame := time.Second / fps
	audioStep := time.Duration(1024 * float64(time.Second) / rate)
	base := time.UnixMilli(1_700_000_000_000)
	var units []*media.Unit
	ai := 0
	for i := range frames {
		dts := time.Duration(i) * frame
		// Audio up to this frame's time and ahead comes before it.
		for ; time.Duration(ai)*audioStep <= dts+ahead; ai++ {
			ad := time.Duration(ai) * audioStep
			units = append(units, &media.Unit{Track: 1, PTS: ad, DTS: ad, Time: base.Add(ad), Payload: ac.Units[ai%len(ac.Units)].Payload})
		}
		cu := clip.Units[i%len(clip.Units)]
		units = append(units, &media.Unit{Track: 0, DTS: dts, PTS: dts + delay, Time: base.Add(dts), Key: cu.Key, NALUs: cu.NALUs})
	}
	ds := &dirStore{dir: t.TempDir()}
	sp := newTestSpool(t, t.TempDir(), ds)
	w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: time.Duration(clip.GOP()) * frame, Spool: sp, Log: zaptest.NewLogger(t)})
	if err := w.SetTracks([]*media.Track{&vt, &at}); err != nil {
		t.Fatal(err)
	}
	for _, u := range units {
		if err := w.WriteUnit(u); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	drain(t, sp)
	segs := ds.stored()
	if len(segs) < 3 {
		t.Fatalf("%d segments, want 3", len(segs))
	}
	tol := 1024 / rate
	stored := 0
	for i, s := range segs {
		sp := trackSpans(t, ds.path(s), rate)
		stored += sp.audioSamples
		t.Logf("segment %d: video %.3f-%.3f s, audio %.3f-%.3f s", i, sp.videoStart, sp.videoEnd, sp.audioStart, sp.audioEnd)
		if sp.audioStart < sp.videoStart-0.001 || sp.audioStart > sp.videoStart+tol {
			t.Errorf("segment %d: audio starts at %.3f s, its video is presented from %.3f s", i, sp.audioStart, sp.videoStart)
		}
		last := i == len(segs)-1 && ahead < 0 // the camera stopped before sending its audio
		if !last && (sp.audioEnd > sp.videoEnd+tol || sp.audioEnd < sp.videoEnd-tol) {
			t.Errorf("segment %d: audio ends at %.3f s, its video at %.3f s", i, sp.audioEnd, sp.videoEnd)
		}
	}
	// Every audio frame sent, from the first keyframe's presentation to the
	// end of the last frame's, once.
	want := 0
	for _, u := range units {
		if u.Track == 1 && u.DTS >= delay && u.DTS < time.Duration(frames-1)*frame+delay+frame {
			want++
		}
	}
	if stored != want {
		t.Errorf("%d audio frames stored, want %d", stored, want)
	}
}

// TestWriterOneFrameSegment: a segment cut after its first frame (a loss
// right after a keyframe) lasts the stream's frame interval, the duration
// of the last frame whose duration was known, not a fixed 40 ms.
func TestWriterOneFrameSegment(t *testing.T) {
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	vt := clip.Track()
	frame := time.Second / 15
	ds := &dirStore{dir: t.TempDir()}
	sp := newTestSpool(t, t.TempDir(), ds)
	w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: time.Minute, Spool: sp, Log: zaptest.NewLogger(t)})
	if err := w.SetTracks([]*media.Track{&vt}); err != nil {
		t.Fatal(err)
	}
	base := time.UnixMilli(1_700_000_000_000)
	write := func(i int, key bool) {
		cu := clip.Units[0]
		if !key {
			cu = clip.Units[1]
		}
		d := time.Duration(i) * frame
		if err := w.WriteUnit(&media.Unit{Track: 0, DTS: d, PTS: d, Time: base.Add(d), Key: key, NALUs: cu.NALUs}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		write(i, i == 0)
	}
	w.Discontinuity() // frames lost
	write(20, true)
	w.Discontinuity() // lost again right after the keyframe
	write(40, true)
	write(41, false)
	w.Close()
	drain(t, sp)
	segs := ds.stored()
	if len(segs) != 3 {
		t.Fatalf("%d segments, want 3", len(segs))
	}
	if d := segs[1].Duration - frame; segs[1].Frames != 1 || d < -20*time.Microsecond || d > 20*time.Microsecond {
		t.Errorf("the segment of one frame: %d frames, %v, want 1 frame of %v", segs[1].Frames, segs[1].Duration, frame)
	}
}
