package synth

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// rawPlay plays every track of an RTSP path over TCP with hand-written
// requests and discards the interleaved data, so that a benchmark reader
// costs almost nothing beyond the kernel's copy.
func rawPlay(addr, path string, tracks int) (net.Conn, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(conn)
	url := "rtsp://" + addr + "/" + path
	cseq := 0
	do := func(method, u, extra string) (map[string]string, error) {
		cseq++
		if _, err := fmt.Fprintf(conn, "%s %s RTSP/1.0\r\nCSeq: %d\r\n%s\r\n", method, u, cseq, extra); err != nil {
			return nil, err
		}
		status, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if !strings.Contains(status, " 200 ") {
			return nil, fmt.Errorf("%s: %s", method, strings.TrimSpace(status))
		}
		hdr := make(map[string]string)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return nil, err
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if k, v, ok := strings.Cut(line, ":"); ok {
				hdr[strings.ToLower(k)] = strings.TrimSpace(v)
			}
		}
		if n, _ := strconv.Atoi(hdr["content-length"]); n > 0 {
			if _, err := io.CopyN(io.Discard, br, int64(n)); err != nil {
				return nil, err
			}
		}
		return hdr, nil
	}
	fail := func(err error) (net.Conn, error) {
		conn.Close()
		return nil, err
	}
	if _, err := do("DESCRIBE", url, "Accept: application/sdp\r\n"); err != nil {
		return fail(err)
	}
	session := ""
	for i := range tracks {
		extra := fmt.Sprintf("Transport: RTP/AVP/TCP;unicast;interleaved=%d-%d\r\n", 2*i, 2*i+1)
		if session != "" {
			extra += "Session: " + session + "\r\n"
		}
		hdr, err := do("SETUP", fmt.Sprintf("%s/trackID=%d", url, i), extra)
		if err != nil {
			return fail(err)
		}
		session, _, _ = strings.Cut(hdr["session"], ";")
	}
	if _, err := do("PLAY", url+"/", "Session: "+session+"\r\n"); err != nil {
		return fail(err)
	}
	go func() { _, _ = io.Copy(io.Discard, br) }() // exits when conn is closed
	return conn, nil
}

// TestBenchReaders is not a test: it is the reader process of the
// benchmarks, started by them with SYNTH_BENCH_ADDR set, so that the readers'
// CPU is not charged to the server. It reads until its stdin closes.
func TestBenchReaders(t *testing.T) {
	addr := os.Getenv("SYNTH_BENCH_ADDR")
	if addr == "" {
		t.Skip("benchmark helper process; runs only under BenchmarkServe")
	}
	tracks, _ := strconv.Atoi(os.Getenv("SYNTH_BENCH_TRACKS"))
	for _, p := range strings.Split(os.Getenv("SYNTH_BENCH_PATHS"), ",") {
		conn, err := rawPlay(addr, p, tracks)
		if err != nil {
			t.Fatalf("play %s: %v", p, err)
		}
		defer conn.Close()
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkServe measures the server's CPU per camera per second of media.
// One op is one second of media for every camera; run with -benchtime=5x
// or more. Readers run in a child process, so the CPU reported is the
// server's alone (RTP packetization reuse, gortsplib marshaling, TCP writes).
func BenchmarkServe(b *testing.B) {
	cases := []struct {
		name    string
		cameras int
		codec   string
		audio   bool
		readers bool
	}{
		{"100 cameras h264 read", 100, CodecH264, false, true},
		{"100 cameras h265 aac read", 100, CodecH265, true, true},
		{"500 cameras idle", 500, CodecH264, true, false},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			specs := make([]CameraSpec, tc.cameras)
			paths := make([]string, tc.cameras)
			for i := range specs {
				paths[i] = fmt.Sprintf("cam%d", i)
				specs[i] = CameraSpec{Path: paths[i], Codec: tc.codec, Audio: tc.audio}
			}
			s := NewServer(Config{Cameras: specs})
			if err := s.Start(); err != nil {
				b.Fatal(err)
			}
			defer s.Close()

			if tc.readers {
				tracks := 1
				if tc.audio {
					tracks = 2
				}
				startBenchReaders(b, s.Addr(), paths, tracks)
				for _, p := range paths {
					if n, _ := s.Readers(p); n != 1 {
						b.Fatalf("camera %s has %d readers, want 1", p, n)
					}
				}
			}

			// let the first keyframes go out before measuring
			time.Sleep(500 * time.Millisecond)
			frames0 := totalFrames(s, paths)
			media0, _ := s.MediaTime(paths[0])
			cpu0, wall0 := cpuTime(), time.Now()
			b.ResetTimer()
			for i := range b.N {
				for {
					m, _ := s.MediaTime(paths[0])
					if m-media0 >= time.Duration(i+1)*time.Second {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			b.StopTimer()
			cpu, wall := cpuTime()-cpu0, time.Since(wall0)
			media, _ := s.MediaTime(paths[0])
			mediaSec := (media - media0).Seconds()
			frames := totalFrames(s, paths) - frames0
			b.ReportMetric(cpu.Seconds()*1000/(float64(tc.cameras)*mediaSec), "cpu-ms/cam/s")
			b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "%core")
			b.ReportMetric(float64(frames)/mediaSec, "frames/s")
		})
	}
}

func totalFrames(s *Server, paths []string) uint64 {
	var n uint64
	for _, p := range paths {
		f, _ := s.FrameCount(p)
		n += f
	}
	return n
}

// BenchmarkPacketizeFrame measures what the server saves by packetizing each
// clip once: the cost of RTP-encoding one 720p access unit.
func BenchmarkPacketizeFrame(b *testing.B) {
	for _, codec := range []string{CodecH264, CodecH265} {
		b.Run(codec, func(b *testing.B) {
			c, err := Fixture(codec, false)
			if err != nil {
				b.Fatal(err)
			}
			vc, _ := codecByName(codec)
			b.ResetTimer()
			for i := range b.N {
				if _, err := packetizeVideo(vc, c.Units[i%len(c.Units):i%len(c.Units)+1]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// startBenchReaders starts this test binary's TestBenchReaders in a child
// process reading paths (tracks each) from the RTSP server at addr, and
// returns once it reads them all; the child stops at the end of b.
func startBenchReaders(b *testing.B, addr string, paths []string, tracks int) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBenchReaders$", "-test.v")
	cmd.Env = append(os.Environ(), "SYNTH_BENCH_ADDR="+addr,
		"SYNTH_BENCH_PATHS="+strings.Join(paths, ","),
		"SYNTH_BENCH_TRACKS="+strconv.Itoa(tracks))
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
	b.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "ready" {
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }() // ends when the child does
}
