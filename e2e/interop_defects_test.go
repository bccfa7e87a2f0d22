package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/rtsp"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

// Recording from MediaMTX, an RTSP server no one here wrote, with FFmpeg
// publishing into it: H.265 and H.264 with B-frames and AAC (decoding times
// derived from presentation times that go back and forth), AAC frames split
// over several RTP packets, and a Vigia reader whose sink is stuck. Every
// stored segment must decode without a word from FFmpeg and hold as many
// frames as its duration at the clip's rate, within 1 %.

// mediamtxPath returns an unpacked MediaMTX binary: VIGIA_MEDIAMTX, or the
// peer shipped beside the repository (../shared/peers/mediamtx.xz),
// unpacked once into the user's cache directory. The test is skipped when
// there is neither.
func mediamtxPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("VIGIA_MEDIAMTX"); p != "" {
		return p
	}
	xzPath, err := filepath.Abs("../../shared/peers/mediamtx.xz")
	if err == nil {
		if _, err = os.Stat(xzPath); err != nil {
			xzPath, err = filepath.Abs("../shared/peers/mediamtx.xz")
		}
	}
	if err == nil {
		_, err = os.Stat(xzPath)
	}
	if err != nil {
		t.Skip("MediaMTX not available: set VIGIA_MEDIAMTX or provide ../shared/peers/mediamtx.xz")
	}
	mediamtxOnce.Do(func() { mediamtxBin, mediamtxErr = unpackMediaMTX(xzPath) })
	if mediamtxErr != nil {
		t.Fatalf("unpacking %s: %v", xzPath, mediamtxErr)
	}
	return mediamtxBin
}

var (
	mediamtxOnce sync.Once
	mediamtxBin  string
	mediamtxErr  error
)

// unpackMediaMTX unpacks xzPath into the cache directory, named by its
// content, unless it is there already.
func unpackMediaMTX(xzPath string) (string, error) {
	f, err := os.Open(xzPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "vigia", "peers")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "mediamtx-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp, err := os.CreateTemp(dir, "mediamtx-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	cmd := exec.Command("xz", "-dc", xzPath)
	cmd.Stdout = tmp
	out := &lockedBuffer{}
	cmd.Stderr = out
	if err := cmd.Run(); err != nil {
		_ = tmp.Close()
		return "", fmt.Errorf("xz: %v: %s", err, out.String())
	}
	if err := tmp.Chmod(0o755); err != nil {
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return bin, os.Rename(tmp.Name(), bin)
}

// mediaMTX is a running MediaMTX that serves what is published to it
// (RTSP or RTMP) and records nothing.
type mediaMTX struct {
	rtsp, rtmp string // base URLs
	log        *lockedBuffer
}

// startMediaMTX runs MediaMTX on loopback ports chosen now; it stops at
// the end of the test.
func startMediaMTX(t *testing.T) *mediaMTX {
	t.Helper()
	bin := mediamtxPath(t)
	dir := t.TempDir()
	rtspPort, rtmpPort := testenv.FreePort(t), testenv.FreePort(t)
	rtpPort := freeUDPPair(t)
	conf := fmt.Sprintf(`logLevel: info
api: no
metrics: no
pprof: no
playback: no
hls: no
webrtc: no
srt: no
moq: no
rtmp: yes
rtmpAddress: 127.0.0.1:%d
rtspAddress: 127.0.0.1:%d
rtpAddress: 127.0.0.1:%d
rtcpAddress: 127.0.0.1:%d
pathDefaults:
  record: no
paths:
  all_others:
`, rtmpPort, rtspPort, rtpPort, rtpPort+1)
	confPath := filepath.Join(dir, "mediamtx.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &mediaMTX{rtsp: fmt.Sprintf("rtsp://127.0.0.1:%d", rtspPort), rtmp: fmt.Sprintf("rtmp://127.0.0.1:%d", rtmpPort), log: &lockedBuffer{}}
	cmd := exec.Command(bin, confPath)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = m.log, m.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			out := m.log.String()
			if len(out) > 10000 {
				out = out[len(out)-10000:]
			}
			t.Logf("mediamtx log (tail):\n%s", out)
		}
	})
	waitFor(t, 15*time.Second, "mediamtx listening", func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", rtspPort))
		if err != nil {
			return false
		}
		_ = c.Close()
		return true
	})
	return m
}

// freeUDPPair returns an even UDP port whose next port is free too.
func freeUDPPair(t *testing.T) int {
	t.Helper()
	for range 50 {
		p := 20000 + 2*rand.IntN(15000)
		a, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		b, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", p+1))
		_ = a.Close()
		if err != nil {
			continue
		}
		_ = b.Close()
		return p
	}
	t.Fatal("no free pair of UDP ports")
	return 0
}

// heavyVideo encodes noise at 8 Mbit/s (H.264 without B-frames): about
// 1 MB a second to read.
var heavyVideo = []string{"-vf", "noise=alls=60:allf=t+u", "-c:v", "libx264", "-preset", "ultrafast", "-bf", "0",
	"-b:v", "8M", "-maxrate", "8M", "-bufsize", "1M"}

// interopClip encodes a clip of 640x360 at 15 fps (a keyframe every 30
// frames) with video args and AAC with audio args, once per test, so that
// publishing it costs no encoding.
func interopClip(t *testing.T, name string, seconds int, video, audio []string) string {
	t.Helper()
	clip := filepath.Join(t.TempDir(), name+".mkv")
	args := []string{"-hide_banner", "-loglevel", "error",
		"-f", "lavfi", "-i", "testsrc2=size=640x360:rate=15", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
		"-t", strconv.Itoa(seconds), "-pix_fmt", "yuv420p", "-g", "30"}
	args = append(append(append(args, video...), audio...), clip)
	if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("making %s: %v: %s", name, err, out)
	}
	return clip
}

// publish has FFmpeg send clip to url in real time (its own pace, no
// encoding) until the end of the test.
func publish(t *testing.T, clip, url string, format ...string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	args := append([]string{"-hide_banner", "-loglevel", "error", "-re", "-i", clip, "-c", "copy"}, format...)
	cmd := exec.CommandContext(ctx, "ffmpeg", append(args, url)...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() && out.String() != "" {
			t.Logf("ffmpeg publishing %s: %s", url, out.String())
		}
	})
}

// auditInterop checks one stored segment: FFmpeg decodes it without a
// word, its video has the codec wanted, and it holds as many frames as
// its duration at fps, within 1 %.
//
// The first segment of a connection is checked for decoding only: the
// DTS extractor spaces the decoding times of its first frames 1 ms apart
// until it knows the reorder depth, so that segment lasts the depth's
// frames less (2 frames with libx264 -bf 3; MediaMTX's own recording of
// the same stream shows the same).
func auditInterop(t *testing.T, path, codec, audio string, fps float64, first bool) {
	t.Helper()
	if out, err := exec.Command("ffmpeg", "-v", "error", "-i", path, "-f", "null", "-").CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("%s: ffmpeg decoding says %v: %s", filepath.Base(path), err, firstLines(string(out), 5))
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-count_packets", "-show_entries",
		"stream=codec_type,codec_name,duration,nb_read_packets", "-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var raw struct {
		Streams []struct {
			CodecType string `json:"codec_type"`
			CodecName string `json:"codec_name"`
			Duration  string `json:"duration"`
			Packets   string `json:"nb_read_packets"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatal(err)
	}
	gotAudio := ""
	for _, s := range raw.Streams {
		switch s.CodecType {
		case "video":
			if s.CodecName != codec {
				t.Errorf("%s: video %s, want %s", filepath.Base(path), s.CodecName, codec)
			}
			dur, _ := strconv.ParseFloat(s.Duration, 64)
			frames, _ := strconv.Atoi(s.Packets)
			want := dur * fps
			if !first && math.Abs(float64(frames)-want) > want/100 {
				t.Errorf("%s: %d frames in %.3f s, want %.1f at %v fps", filepath.Base(path), frames, dur, want, fps)
			}
		case "audio":
			gotAudio = s.CodecName
		}
	}
	if gotAudio != audio {
		t.Errorf("%s: audio %q, want %q", filepath.Base(path), gotAudio, audio)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// TestInteropBFramesAndAAC records from MediaMTX what FFmpeg publishes into
// it: H.265 (libx265, B-frames) with AAC over TCP and over UDP, H.264
// (libx264 with 3 B-frames) with AAC over TCP, and AAC frames larger than
// an RTP packet (6 channels at 768 kbit/s: MediaMTX splits each over two
// or three packets) over TCP. Every stored segment decodes without a word
// from FFmpeg and holds as many frames as its duration at 15 fps, within
// 1 %. Before, presentation times of B-frames, which go back and forth in
// decoding order, were taken for a camera clock running 1-3 % slow and
// rescaled (a 10 s segment of 150 frames lasting 10.24 s); and split AAC
// frames were put together from a read buffer refilled meanwhile.
func TestInteropBFramesAndAAC(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"ffmpeg", "ffprobe", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: run make deps", tool)
		}
	}
	mtx := startMediaMTX(t)
	m := testenv.MinIO(t)
	const seconds = 40
	aac := []string{"-c:a", "aac", "-b:a", "64k"}
	h265 := interopClip(t, "h265", seconds, []string{"-c:v", "libx265", "-preset", "ultrafast", "-x265-params", "log-level=error"}, aac)
	h264 := interopClip(t, "h264", seconds, []string{"-c:v", "libx264", "-preset", "ultrafast", "-bf", "3"}, aac)
	// With 8 Mbit/s of video: the read buffer is refilled often, between
	// the packets of an AAC frame too.
	big := interopClip(t, "aac51", seconds, heavyVideo, []string{"-c:a", "aac", "-ac", "6", "-b:a", "768k"})
	publish(t, h265, mtx.rtsp+"/h265", "-f", "rtsp", "-rtsp_transport", "tcp")
	publish(t, h264, mtx.rtsp+"/h264", "-f", "rtsp", "-rtsp_transport", "tcp")
	// Over RTMP, so that MediaMTX packetizes the AAC frames itself.
	publish(t, big, mtx.rtmp+"/aac51", "-f", "flv")

	c := s3Config(t, m)
	c.Recording.SegmentDuration = config.Duration(6 * time.Second)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	type camera struct{ id, path, transport, codec string }
	cams := []camera{
		{"mtx-h265-tcp", "h265", "tcp", "hevc"},
		{"mtx-h265-udp", "h265", "udp", "hevc"},
		{"mtx-h264-tcp", "h264", "tcp", "h264"},
		{"mtx-aac51-tcp", "aac51", "tcp", "h264"},
	}
	for _, cam := range cams {
		waitFor(t, 20*time.Second, "ffmpeg publishing "+cam.path, func() bool {
			return strings.Contains(mtx.log.String(), "is publishing to path '"+cam.path+"'")
		})
		if err := a.RecordCamera(ingest.Camera{ID: cam.id, URL: mtx.rtsp + "/" + cam.path, Transport: cam.transport, Sound: true, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	st := openS3(t, c)
	for _, cam := range cams {
		t.Run(strings.TrimPrefix(cam.id, "mtx-"), func(t *testing.T) {
			// The first segment starts at the first keyframe received and the
			// fourth one ends about 25 s later, before the clips end.
			segs := waitSegments(t, st, cam.id, 4, 90*time.Second)
			for i, s := range segs[:4] {
				auditInterop(t, download(t, st, s.Key), cam.codec, "aac", 15, i == 0)
			}
		})
	}
	if strings.Contains(mtx.log.String(), "too slow") {
		t.Error("mediamtx found a Vigia reader too slow")
	}
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
	waitFor(t, 20*time.Second, "ffmpeg publishing", func() bool {
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
	waitFor(t, 20*time.Second, "the source reading", func() bool { return drops.Load() > 0 })
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
	waitFor(t, 10*time.Second, "units reaching the sink", func() bool { return sink.units.Load() > 0 })
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
