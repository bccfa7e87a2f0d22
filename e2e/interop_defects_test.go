package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/rtsp"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

// heavyVideo encodes noise at 8 Mbit/s (H.264 without B-frames): about
// 1 MB a second to read.
var heavyVideo = []string{"-vf", "noise=alls=60:allf=t+u", "-c:v", "libx264", "-preset", "ultrafast", "-bf", "0",
	"-b:v", "8M", "-maxrate", "8M", "-bufsize", "1M"}

// interopClip returns a clip of 640x360 at 15 fps (a keyframe every 30
// frames) encoded with video args and AAC with audio args, made once and
// kept in the clip cache, so that publishing it costs no encoding.
func interopClip(t *testing.T, name string, seconds int, video, audio []string) string {
	t.Helper()
	key := fmt.Sprint(seconds, video, audio)
	path, err := testenv.CachedClip(key, name, ".mkv", func(out string) error {
		args := []string{"-f", "lavfi", "-i", "testsrc2=size=640x360:rate=15", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
			"-t", strconv.Itoa(seconds), "-pix_fmt", "yuv420p", "-g", "30"}
		return ffmpegRun(append(append(append(args, video...), audio...), out)...)
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// stuckSink keeps the ingest.Sink contract (Unit never waits) in front of
// a consumer stuck until opened, as the recorder's pipeline does in front
// of a slow disk: units past its queue are dropped and counted.
type stuckSink struct {
	queue chan *media.Unit
	open  chan struct{}
	units atomic.Int64
	drops atomic.Int64
}

func newStuckSink() *stuckSink {
	s := &stuckSink{queue: make(chan *media.Unit, 512), open: make(chan struct{})}
	go func() {
		<-s.open
		for u := range s.queue {
			s.units.Add(1)
			u.Release()
		}
	}()
	return s
}

func (s *stuckSink) Tracks([]*media.Track) error { return nil }

func (s *stuckSink) Unit(u *media.Unit) {
	select {
	case s.queue <- u:
	default:
		s.drops.Add(1)
		u.Release()
	}
}

// TestInteropReaderNeverStalls: a Vigia RTSP source (TCP) reads a MediaMTX
// stream of 8 Mbit/s while the consumer behind its sink is stuck for 20 s.
// The socket buffers between them hold a few seconds of it, and MediaMTX's
// queue towards a reader 512 frames (about 8 s); MediaMTX never finds the
// reader too slow: the source reads on, and the sink drops what its
// consumer cannot take.
func TestInteropReaderNeverStalls(t *testing.T) {
	t.Parallel()
	mtx := startMediaMTX(t)
	clip := interopClip(t, "heavy", 45, heavyVideo, []string{"-c:a", "aac", "-b:a", "64k"})
	publish(t, clip, mtx.rtsp+"/cam", "-f", "rtsp", "-rtsp_transport", "tcp")
	testenv.WaitFor(t, 20*time.Second, "ffmpeg publishing", func() bool {
		return strings.Contains(mtx.log.String(), "is publishing to path 'cam'")
	})
	src := rtsp.New(ingest.Camera{ID: "cam", URL: mtx.rtsp + "/cam", Transport: "tcp", Sound: true, Trusted: true},
		ingest.SourceConfig{ReadTimeout: 10 * time.Second}, nil)
	sink := newStuckSink()
	drops := &sink.drops
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, sink) }()
	opened := false
	defer func() {
		if !opened {
			close(sink.open)
		}
		cancel()
		<-done
	}()
	testenv.WaitFor(t, 20*time.Second, "the source reading", func() bool { return drops.Load() > 0 })
	stuckUntil := time.Now().Add(20 * time.Second)
	for time.Now().Before(stuckUntil) {
		select {
		case err := <-done:
			t.Fatalf("the source ended while its sink was stuck: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	opened = true
	close(sink.open)
	before := drops.Load()
	testenv.WaitFor(t, 10*time.Second, "units reaching the sink", func() bool { return sink.units.Load() > 0 })
	// MediaMTX's queue overflows after about 12 s, and it reports
	// discards every second: within the 20 s.
	if strings.Contains(mtx.log.String(), "too slow") {
		t.Errorf("mediamtx found the reader too slow: the source stopped reading while its sink was stuck")
	}
	if before < 100 {
		t.Errorf("%d units dropped while the consumer was stuck 20 s, want the stream's", before)
	}
	t.Logf("%d units dropped by the sink while its consumer was stuck", before)
}
