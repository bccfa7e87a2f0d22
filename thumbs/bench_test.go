//go:build cgo

package thumbs

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/synth"
)

// BenchmarkThumbnailPerCamera makes one camera's thumbnail of a minute: a
// 720p keyframe (the noisy fixture) sent to a decoder process, decoded
// alone, scaled to 320 wide and encoded as JPEG there. It reports the
// share of one core a camera costs: this process's and the decoder
// process's CPU time, per thumbnail, at one a minute.
func BenchmarkThumbnailPerCamera(b *testing.B) {
	for _, codec := range []string{synth.CodecH264, synth.CodecH265} {
		b.Run(codec, func(b *testing.B) {
			clip, err := synth.Fixture(codec, false)
			if err != nil {
				b.Fatal(err)
			}
			s := New(Config{Decoder: testDecoder(b)})
			defer s.Close()
			if _, err := s.decodeStill(context.Background(), clip.Track().Codec, clip.Units[0].NALUs, 320, 75); err != nil {
				b.Fatal(err) // starts the process
			}
			cpu0 := processCPU(b)
			child0 := s.Stats().CPU
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.decodeStill(context.Background(), clip.Track().Codec, clip.Units[0].NALUs, 320, 75); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			child := (s.Stats().CPU - child0).Seconds() / float64(b.N)
			self := (processCPU(b) - cpu0).Seconds() / float64(b.N)
			b.ReportMetric(100*(child+self)/60, "%core/camera")
			b.ReportMetric(1e3*child, "decoder-ms/op")
			b.ReportMetric(1e3*self, "recorder-ms/op")
		})
	}
}

// processCPU is this process's user and system CPU time.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
