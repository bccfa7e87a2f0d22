package rtsp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestBenchFleet is not a test: it is the camera process of
// BenchmarkSourcesOnFleet, started by it with RTSP_BENCH_FLEET set to the
// number of cameras. It prints their URLs and serves until stdin closes.
func TestBenchFleet(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RTSP_BENCH_FLEET"))
	if n == 0 {
		t.Skip("benchmark helper process; runs only under BenchmarkSourcesOnFleet")
	}
	f := synth.NewFleet(synth.FleetConfig{Cameras: n, Audio: true})
	if err := f.Start(); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 1; i <= n; i++ {
		fmt.Println(f.URL(i))
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// countSink counts units and gives their memory back at once.
type countSink struct{ video, audio *atomic.Int64 }

func (countSink) Tracks([]*media.Track) error { return nil }
func (s countSink) Unit(u *media.Unit) {
	if u.Track == 0 {
		s.video.Add(1)
	} else {
		s.audio.Add(1)
	}
	u.Release()
}

// BenchmarkSourcesOnFleet measures the RTSP sources' CPU per camera on
// real sockets: cameras of the synthetic fleet (720p H.264 + AAC, in a
// child process) read by this package's TCP client into sinks that
// release each unit (no pipeline, no disk). One op is one second; run with
// -benchtime 10x or more.
func BenchmarkSourcesOnFleet(b *testing.B) {
	defer media.SetPoisonReleased(media.SetPoisonReleased(false))
	const cameras = 200
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchFleet$")
	cmd.Env = append(os.Environ(), "RTSP_BENCH_FLEET="+strconv.Itoa(cameras))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	var urls []string
	sc := bufio.NewScanner(stdout)
	for len(urls) < cameras && sc.Scan() {
		if u := strings.TrimSpace(sc.Text()); strings.HasPrefix(u, "rtsp://") {
			urls = append(urls, u)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	var video, audio atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i, u := range urls {
		src := New(ingest.Camera{ID: "cam-" + strconv.Itoa(i+1), URL: u, Sound: true, Trusted: true}, ingest.SourceConfig{}, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = src.Run(ctx, countSink{&video, &audio})
		}()
	}
	defer func() {
		cancel()
		wg.Wait()
	}()
	// A keyframe and some frames each.
	testenv.WaitFor(b, 20*time.Second, "30 video units a camera", func() bool { return video.Load() >= int64(cameras*30) })
	v0 := video.Load()
	cpu0, wall0 := procCPU(), time.Now()
	b.ResetTimer()
	for range b.N {
		time.Sleep(time.Second)
	}
	b.StopTimer()
	cpu, wall := procCPU()-cpu0, time.Since(wall0)
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds()/cameras, "%core/cam")
	b.ReportMetric(float64(video.Load()-v0)/wall.Seconds()/cameras, "frames/cam/s")
}

func procCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
