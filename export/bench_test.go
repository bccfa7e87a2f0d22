package export

import (
	"context"
	"testing"
	"time"
)

// BenchmarkExport remuxes 10 minutes of 720p H.264 + AAC (60 s segments,
// fs storage) into one MP4 and reports the speed as a multiple of real
// time (x_realtime) and MB/s of segments read.
func BenchmarkExport(b *testing.B) {
	for _, codec := range []string{"h264", "h265"} {
		b.Run(codec, func(b *testing.B) {
			st := newFS(b)
			recordBig(b, st, codec)
			req := Request{Camera: "7", Start: t0, End: t0.Add(10 * time.Minute)}
			b.ResetTimer()
			var size int64
			for range b.N {
				c, err := Build(context.Background(), st, req, Options{Progress: func(done, total int64) { size = total }})
				if err != nil {
					b.Fatal(err)
				}
				_ = c.Close()
			}
			per := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric((10*time.Minute).Seconds()/per.Seconds(), "x_realtime")
			b.ReportMetric(float64(size)/1e6/per.Seconds(), "MB/s")
		})
	}
}
