package segmenter

import (
	"context"
	"io"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// BenchmarkWriterWriteUnit measures the recording hot path of one camera:
// a video access unit of the synthetic 720p clip (15 fps, GOP 2 s, about
// 2 Mbit/s) into a Writer, with the audio units of the same time span when
// the case has audio, fragments of 1 s fsynced to a spool in a temporary
// directory, and finished segments "uploaded" to io.Discard. One op is one
// video frame; at 15 fps, ns/op × 15 / 10⁷ is the writer's wall time in % of
// one core per camera (fsync waits included).
func BenchmarkWriterWriteUnit(b *testing.B) {
	cases := []struct {
		name  string
		codec string
		audio bool
	}{
		{"h264", synth.CodecH264, false},
		{"h264_aac", synth.CodecH264, true},
		{"h265", synth.CodecH265, false},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			clip, err := synth.Fixture(tc.codec, false)
			if err != nil {
				b.Fatal(err)
			}
			vt := clip.Track()
			tracks := []*media.Track{&vt}
			var aclip *synth.AudioClip
			if tc.audio {
				if aclip, err = synth.AudioFixture(); err != nil {
					b.Fatal(err)
				}
				at := aclip.Track()
				tracks = append(tracks, &at)
			}
			sp, err := NewSpool(SpoolConfig{
				Dir: b.TempDir(),
				Upload: func(_ context.Context, _ Segment, body io.ReadSeeker) error {
					_, err := io.Copy(io.Discard, body)
					return err
				},
				Log: zap.NewNop(),
			})
			if err != nil {
				b.Fatal(err)
			}
			if err := sp.Start(); err != nil {
				b.Fatal(err)
			}
			defer sp.Close()
			w := NewWriter(WriterConfig{Camera: "bench", Spool: sp, SegmentDuration: 60 * time.Second})
			if err := w.SetTracks(tracks); err != nil {
				b.Fatal(err)
			}

			var size int64
			for _, u := range clip.Units {
				size += int64(u.Size())
			}
			b.SetBytes(size / int64(len(clip.Units)))
			frame := time.Duration(float64(time.Second) / clip.FPS)
			var aframe time.Duration
			if aclip != nil {
				aframe = aclip.Duration() / time.Duration(len(aclip.Units))
			}
			base := time.Now()
			ai := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d := time.Duration(i) * frame
				for aclip != nil && time.Duration(ai)*aframe <= d {
					a := aclip.Units[ai%len(aclip.Units)]
					a.Track, a.PTS, a.DTS, a.Time = 1, time.Duration(ai)*aframe, time.Duration(ai)*aframe, base.Add(time.Duration(ai)*aframe)
					if err := w.WriteUnit(&a); err != nil {
						b.Fatal(err)
					}
					ai++
				}
				u := clip.Units[i%len(clip.Units)]
				u.Track, u.PTS, u.DTS, u.Time = 0, d, d, base.Add(d)
				if err := w.WriteUnit(&u); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			w.Close()
		})
	}
}
