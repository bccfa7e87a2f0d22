//go:build cgo

package motion

import (
	"testing"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// benchUnits returns one minute of 720p 15 fps units (fixture clip looped
// with continuous times).
func benchUnits(b *testing.B, units []media.Unit, seconds int) []*media.Unit {
	b.Helper()
	base := time.Unix(1700000000, 0)
	out := make([]*media.Unit, seconds*15)
	for i := range out {
		u := units[i%len(units)]
		u.PTS = time.Duration(i) * time.Second / 15
		u.DTS = u.PTS
		u.Time = base.Add(u.PTS)
		out[i] = &u
	}
	return out
}

// BenchmarkMotionPerCamera runs one second of one 720p 15 fps camera
// through a detector: "synth" is the synthetic camera of vigia bench (a
// 4 s loop of an animated test pattern under heavy noise: it moves all the
// time), "object" the first clip of the labelled set at 720p (an object
// moving half of the time on a still scene).
// It reports the share of one core a camera costs.
func BenchmarkMotionPerCamera(b *testing.B) {
	clip, err := synth.Fixture(synth.CodecH264, false)
	if err != nil {
		b.Fatal(err)
	}
	still := benchUnits(b, clip.Units, 60)
	sc := labelled[0] // motion half of the time
	sc.size = "1280x720"
	moving := sc.encode(b, time.Unix(1700000000, 0))
	for _, tc := range []struct {
		name  string
		units []*media.Unit
	}{{"synth", still}, {"object", moving}} {
		b.Run(tc.name, func(b *testing.B) {
			d := NewDetector("cam", DefaultSettings(), testDecoder)
			d.SetCodec(media.H264)
			n, events := 0, 0
			base := time.Unix(1800000000, 0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for k := 0; k < 15; k++ {
					u := *tc.units[n%len(tc.units)] // times go on across loops
					u.Time = base.Add(time.Duration(n) * time.Second / 15)
					events += len(d.Unit(&u))
					n++
				}
			}
			perOp := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(100*perOp, "%core/camera")
			b.ReportMetric(float64(d.decoded)/float64(n), "decoded/frame")
			b.ReportMetric(float64(d.looks)*15*60/float64(n), "looks/min")
			b.ReportMetric(float64(events)*15*60/float64(n), "events/min")
		})
	}
}
