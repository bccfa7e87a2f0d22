//go:build cgo

package decodeproc

import (
	"context"
	"fmt"
	"testing"

	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/thumbs/decoder"
)

// BenchmarkPipe measures what the pipes and the framing cost alone: a
// request of ballast bytes (nothing, a 720p keyframe of the noisy
// fixture at about 100 KB, a 1 MB GOP) to a decoder process, answered by a
// 160x90 luma plane's worth of bytes (what motion gets back), with no
// decoding.
func BenchmarkPipe(b *testing.B) {
	p := testPool(b, Config{Processes: 1})
	for _, size := range []int{0, 100 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("send=%dKiB", size>>10), func(b *testing.B) {
			ballast := make([]byte, size)
			ctx := context.Background()
			if err := p.ping(ctx, ballast, 160*90); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size + 160*90))
			b.ResetTimer()
			for range b.N {
				if err := p.ping(ctx, ballast, 160*90); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMotionKeyframe is motion's most frequent request: a 720p
// keyframe (the noisy fixture) decoded alone with the fast options and
// scaled to 160x90 luma, in this process ("local") and in a decoder
// process ("process"): the difference is what isolation costs per frame.
func BenchmarkMotionKeyframe(b *testing.B) {
	for _, codec := range []string{synth.CodecH264, synth.CodecH265} {
		clip := fixture(b, codec)
		mc := clip.Track().Codec
		key := clip.Units[0].NALUs
		b.Run(codec+"/local", func(b *testing.B) {
			d, err := decoder.New(mc, decoder.Options{Fast: true})
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			for range b.N {
				if ok, err := d.DecodeStill(key); !ok || err != nil {
					b.Fatal(ok, err)
				}
				if _, err := d.Gray(160, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(codec+"/process", func(b *testing.B) {
			p := testPool(b, Config{Processes: 1})
			req := &Request{Codec: mc, Fast: true, Still: true, Units: [][][]byte{key}, GrayWidth: 160, GrayLast: true}
			if _, err := p.Decode(context.Background(), req); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := p.Decode(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
