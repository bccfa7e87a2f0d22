//go:build cgo

package transcode

import (
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/thumbs/decoder"
)

// TestTranscodeH265ToH264: every picture of an H.265 clip comes out as an
// H.264 unit that libavcodec's H.264 decoder decodes at the clip's size,
// with the input's times, the first a keyframe carrying SPS and PPS.
func TestTranscodeH265ToH264(t *testing.T) {
	for _, tc := range []struct {
		name  string
		small bool
	}{{"720p", false}, {"360p", true}} {
		t.Run(tc.name, func(t *testing.T) {
			clip, err := synth.Fixture(synth.CodecH265, tc.small)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := New(media.H265, Options{FPS: int(clip.FPS)})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			dec, err := decoder.New(media.H264, decoder.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer dec.Close()
			params := [][]byte{clip.VPS, clip.SPS, clip.PPS}
			n := min(len(clip.Units), 45)
			var out []Unit
			for _, u := range clip.Units[:n] {
				got, err := tr.Push(u.NALUs, u.PTS, u.Key, params)
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range got {
					pic, err := dec.Decode(o.NALUs)
					if err != nil {
						t.Fatalf("unit %d (pts %v): H.264 decode: %v", len(out), o.PTS, err)
					}
					if !pic {
						t.Fatalf("unit %d: no picture out of the H.264 decoder", len(out))
					}
					if w, h := dec.Size(); w != clip.Width || h != clip.Height {
						t.Fatalf("picture %dx%d; want %dx%d", w, h, clip.Width, clip.Height)
					}
					out = append(out, cloneUnit(o))
				}
			}
			if len(out) != n {
				t.Fatalf("%d units out of %d in: the encoder holds pictures back", len(out), n)
			}
			if !out[0].Key || out[0].NALUs[0][0]&0x1f != 7 {
				t.Fatalf("first unit key %v, NAL type %d; want an IDR led by its SPS", out[0].Key, out[0].NALUs[0][0]&0x1f)
			}
			for i, o := range out {
				if d := o.PTS - clip.Units[i].PTS; d < -tick || d > tick {
					t.Fatalf("unit %d PTS %v; want %v", i, o.PTS, clip.Units[i].PTS)
				}
			}
		})
	}
}

// TestTranscodeWaitsForKeyframe: units before the first keyframe are
// skipped, not fed to the decoder.
func TestTranscodeWaitsForKeyframe(t *testing.T) {
	clip, err := synth.Fixture(synth.CodecH265, true)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(media.H265, Options{FPS: int(clip.FPS)})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	u := clip.Units[1]
	if u.Key {
		t.Fatal("fixture's second unit is a keyframe")
	}
	got, err := tr.Push(u.NALUs, u.PTS, false, nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("Push before a keyframe = %d units, %v; want none", len(got), err)
	}
	tr.Close()
	if _, err := tr.Push(u.NALUs, u.PTS, true, nil); err != ErrClosed {
		t.Fatalf("Push after Close: %v; want ErrClosed", err)
	}
}

// tick is the 90 kHz clock's resolution, which times go through.
const tick = time.Second / 90000

func cloneUnit(u Unit) Unit {
	c := Unit{PTS: u.PTS, Key: u.Key}
	for _, n := range u.NALUs {
		c.NALUs = append(c.NALUs, append([]byte(nil), n...))
	}
	return c
}

// BenchmarkTranscode720p15 transcodes the 720p15 H.265 fixture and reports
// the share of one core (process CPU time, not wall time) a camera takes.
func BenchmarkTranscode720p15(b *testing.B) {
	clip, err := synth.Fixture(synth.CodecH265, false)
	if err != nil {
		b.Fatal(err)
	}
	tr, err := New(media.H265, Options{FPS: int(clip.FPS)})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	params := [][]byte{clip.VPS, clip.SPS, clip.PPS}
	loop := clip.Duration()
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	b.ResetTimer()
	for i := range b.N {
		u := clip.Units[i%len(clip.Units)]
		pts := u.PTS + time.Duration(i/len(clip.Units))*loop
		if _, err := tr.Push(u.NALUs, pts, u.Key, params); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
	// The share of one core a camera at the clip's frame rate takes.
	b.ReportMetric(100*cpu.Seconds()/float64(b.N)*clip.FPS, "%core/camera")
}
