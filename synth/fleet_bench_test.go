package synth

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkFleet measures the fleet's CPU per camera. One op is one second
// of media for every camera; run with -benchtime=10x or more. The readers
// run in a child process (TestBenchReaders), so the CPU reported is the
// fleet's alone, with the loopback's receive path that the kernel runs on
// the sender's CPU.
func BenchmarkFleet(b *testing.B) {
	cases := []struct {
		name    string
		cameras int
		codec   string
		audio   bool
	}{
		{"100 cameras h264 aac", 100, CodecH264, true},
		{"300 cameras h264 aac", 300, CodecH264, true},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			f := NewFleet(FleetConfig{Cameras: tc.cameras, Codec: tc.codec, Audio: tc.audio})
			if err := f.Start(); err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			paths := make([]string, tc.cameras)
			for i := range paths {
				paths[i] = "cam-" + strconv.Itoa(i+1)
			}
			tracks := 1
			if tc.audio {
				tracks = 2
			}
			startBenchReaders(b, f.Addr(), paths, tracks)
			if n := f.Stats().Sessions; n != int64(tc.cameras) {
				// sessions start at the scheduler's next tick
				time.Sleep(100 * time.Millisecond)
				if n = f.Stats().Sessions; n != int64(tc.cameras) {
					b.Fatalf("%d sessions playing, want %d", n, tc.cameras)
				}
			}
			st0 := f.Stats()
			cpu0, wall0 := cpuTime(), time.Now()
			b.ResetTimer()
			for range b.N {
				time.Sleep(time.Second)
			}
			b.StopTimer()
			cpu, wall := cpuTime()-cpu0, time.Since(wall0)
			st := f.Stats()
			b.ReportMetric(100*cpu.Seconds()/wall.Seconds()/float64(tc.cameras), "%core/cam")
			b.ReportMetric(float64(st.Frames-st0.Frames)/wall.Seconds()/float64(tc.cameras), "frames/cam/s")
			b.ReportMetric(float64(st.Dropped-st0.Dropped+st.Late-st0.Late), "dropped+late")
		})
	}
}
