//go:build cgo

package thumbs

import (
	"testing"

	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/thumbs/decoder"
)

// BenchmarkThumbnailPerCamera makes one camera's thumbnail of a minute: a
// 720p keyframe (the noisy fixture) decoded alone, scaled to 320 wide and
// encoded as JPEG. It reports the share of one core a camera costs.
func BenchmarkThumbnailPerCamera(b *testing.B) {
	for _, codec := range []string{synth.CodecH264, synth.CodecH265} {
		b.Run(codec, func(b *testing.B) {
			clip, err := synth.Fixture(codec, false)
			if err != nil {
				b.Fatal(err)
			}
			d, err := decoder.New(clip.Track().Codec, decoder.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := decodeJPEG(d, clip.Units[0].NALUs, 320, 75); err != nil {
					b.Fatal(err)
				}
			}
			perOp := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(100*perOp/60, "%core/camera")
		})
	}
}
