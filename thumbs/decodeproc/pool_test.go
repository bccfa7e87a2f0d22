//go:build cgo

package decodeproc

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/jpeg"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
	"github.com/vigia/vigia/thumbs/decoder"
)

// fixture returns the 720p noisy clip of codec (synth.CodecH264, H265).
func fixture(t testing.TB, codec string) *synth.Clip {
	t.Helper()
	clip, err := synth.Fixture(codec, false)
	if err != nil {
		t.Fatal(err)
	}
	return clip
}

// stillJPEG asks for a keyframe as a JPEG 320 wide.
func stillJPEG(clip *synth.Clip) *Request {
	return &Request{Codec: clip.Track().Codec, Still: true, Units: [][][]byte{clip.Units[0].NALUs},
		Image: JPEG, ImageWidth: 320, Quality: 75}
}

// mustDecode decodes the fixture's keyframe and returns the pid that did.
func mustDecode(t *testing.T, p *Pool) int {
	t.Helper()
	if _, err := p.Decode(context.Background(), stillJPEG(fixture(t, synth.CodecH264))); err != nil {
		t.Fatalf("decode: %v", err)
	}
	st := p.Stats()
	if len(st.PIDs) != 1 {
		t.Fatalf("%d processes, want 1", len(st.PIDs))
	}
	return st.PIDs[0]
}

// localDecoder decodes in this process, for comparison.
func localDecoder(t *testing.T, codec media.Codec, fast bool) *decoder.Decoder {
	t.Helper()
	d, err := decoder.New(codec, decoder.Options{Fast: fast})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// TestDecodeMatchesInProcess: what a decoder process returns is exactly
// what decoding in this process gives: the same JPEG bytes, the same luma
// planes, the same raw picture.
func TestDecodeMatchesInProcess(t *testing.T) {
	p := testPool(t, Config{Processes: 1})
	ctx := context.Background()
	for _, codec := range []string{synth.CodecH264, synth.CodecH265} {
		t.Run(codec, func(t *testing.T) {
			clip := fixture(t, codec)
			mc := clip.Track().Codec

			res, err := p.Decode(ctx, stillJPEG(clip))
			if err != nil {
				t.Fatal(err)
			}
			d := localDecoder(t, mc, false)
			if ok, err := d.DecodeStill(clip.Units[0].NALUs); !ok || err != nil {
				t.Fatalf("local decode: %v %v", ok, err)
			}
			img, err := d.YCbCr(320)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := jpeg.Encode(&want, img, &jpeg.Options{Quality: 75}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.JPEG, want.Bytes()) || res.ImageWidth != 320 || res.ImageHeight != 180 ||
				res.Width != 1280 || res.Height != 720 || res.Pictures != 1 || res.Last != 0 || res.CPU <= 0 {
				t.Fatalf("JPEG of %d bytes %dx%d (want %d bytes 320x180), picture %dx%d, %d pictures, last %d, cpu %v",
					len(res.JPEG), res.ImageWidth, res.ImageHeight, want.Len(), res.Width, res.Height, res.Pictures, res.Last, res.CPU)
			}

			// Motion: the GOP's first frames, fast, luma 160 wide of the
			// first and the last picture.
			units := make([][][]byte, 8)
			for i := range units {
				units[i] = clip.Units[i].NALUs
			}
			res, err = p.Decode(ctx, &Request{Codec: mc, Fast: true, Units: units, GrayWidth: 160, GrayFirst: true, GrayLast: true})
			if err != nil {
				t.Fatal(err)
			}
			fast := localDecoder(t, mc, true)
			var first, last *image.Gray
			for i, u := range units {
				if ok, err := fast.Decode(u); !ok || err != nil {
					t.Fatalf("local unit %d: %v %v", i, ok, err)
				}
				if i == 0 {
					first, _ = fast.Gray(160, nil)
				}
			}
			last, _ = fast.Gray(160, nil)
			if res.Pictures != 8 || res.Last != 7 || !bytes.Equal(res.GrayFirst.Pix, first.Pix) || !bytes.Equal(res.GrayLast.Pix, last.Pix) ||
				res.GrayLast.Rect != image.Rect(0, 0, 160, 90) || res.JPEG != nil {
				t.Fatalf("motion result: %d pictures, last %d, planes %v %v", res.Pictures, res.Last, res.GrayFirst.Rect, res.GrayLast.Rect)
			}

			// Raw, full size.
			res, err = p.Decode(ctx, &Request{Codec: mc, Units: units[:3], Image: YCbCr})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := fast.YCbCr(0) // a picture of the fast decoder: compare sizes only
			if res.YCbCr == nil || res.YCbCr.Rect != raw.Rect || res.Last != 2 {
				t.Fatalf("raw picture %v, last %d", res.YCbCr, res.Last)
			}
		})
	}
	if st := p.Stats(); st.Processes != 1 || st.Requests != 6 || st.CPU <= 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestDecodeErrorsKeepTheProcess: a unit the decoder refuses is an error
// of that request; the process goes on.
func TestDecodeErrorsKeepTheProcess(t *testing.T) {
	p := testPool(t, Config{Processes: 1})
	pid := mustDecode(t, p)
	_, err := p.Decode(context.Background(), &Request{Codec: media.H264, Still: true, Units: [][][]byte{{{0x65, 0xff, 0x00, 0x12}}}, Image: JPEG, Quality: 75})
	if !errors.Is(err, decoder.ErrDecode) && !errors.Is(err, decoder.ErrNoPicture) {
		t.Fatalf("garbage unit: %v, want ErrDecode or ErrNoPicture", err)
	}
	if got := mustDecode(t, p); got != pid || restarts(p) != 0 {
		t.Fatalf("process %d after an error (was %d), %d restarts", got, pid, restarts(p))
	}
}

// restarts is the number of processes a pool replaced.
func restarts(p *Pool) (n uint64) {
	for _, v := range p.Stats().Restarts {
		n += v
	}
	return n
}

// inspectPool runs TestInspect and returns its lines as name → values.
func inspectPool(t *testing.T, p *Pool) map[string][]string {
	t.Helper()
	text, err := p.Test(context.Background(), TestInspect, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		name, value, _ := strings.Cut(line, " ")
		m[name] = append(m[name], value)
	}
	return m
}

// TestSandbox: a decoder process runs with an empty environment, no
// descriptor but its pipes (even one this process leaks without
// close-on-exec), its memory limit, no core dumps, no new privileges, not
// dumpable, in its own process group, and cannot open a socket, a file,
// signal its parent, make a namespace or another process.
func TestSandbox(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox is Linux's")
	}
	leak, err := os.CreateTemp(t.TempDir(), "leak")
	if err != nil {
		t.Fatal(err)
	}
	defer leak.Close()
	if _, err := fcntlClearCloexec(leak.Fd()); err != nil {
		t.Fatal(err)
	}
	limit := limitAboveIdle(t)
	p := testPool(t, Config{Processes: 1, MemoryLimit: limit})
	m := inspectPool(t, p)
	t.Logf("%v", m)
	want := map[string]string{
		"env": "0", "rlimit_data": strconv.FormatInt(limit, 10), "rlimit_core": "0", "no_new_privs": "1",
		"dumpable": "0", "own_group": "true", "socket": "EPERM", "open": "EPERM", "signal_parent": "EPERM",
	}
	if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
		want["seccomp"] = "2"
		want["clone_namespace"], want["clone_process"], want["clone3"] = "EPERM", "EPERM", "ENOSYS"
	}
	for k, v := range want {
		if len(m[k]) != 1 || m[k][0] != v {
			t.Errorf("%s: %v, want %s", k, m[k], v)
		}
	}
	for _, fd := range m["fd"] {
		n, target, _ := strings.Cut(fd, " ")
		if n == "0" || n == "1" || n == "2" {
			if !strings.HasPrefix(target, "pipe:") {
				t.Errorf("descriptor %s is %s, want a pipe", n, target)
			}
			continue
		}
		if target != "anon_inode:[eventpoll]" && target != "anon_inode:[eventfd]" {
			t.Errorf("descriptor %s open: %s", n, target)
		}
	}
}

// fcntlClearCloexec makes fd inherited by new processes.
func fcntlClearCloexec(fd uintptr) (uintptr, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETFD, 0)
	if errno != 0 {
		return 0, errno
	}
	return r, nil
}

// TestCrashIsRestarted: a process that dies during a request fails that
// request only; it is counted and the next request gets a new process.
func TestCrashIsRestarted(t *testing.T) {
	p := testPool(t, Config{Processes: 1})
	pid := mustDecode(t, p)
	if _, err := p.Test(context.Background(), TestCrash, 0); !errors.Is(err, ErrProcess) {
		t.Fatalf("crash: %v, want ErrProcess", err)
	}
	if st := p.Stats(); st.Restarts[ReasonCrash] != 1 || st.Processes != 0 {
		t.Fatalf("stats after the crash %+v", st)
	}
	if got := mustDecode(t, p); got == pid {
		t.Fatalf("the crashed process %d answered again", pid)
	}
}

// hang sends TestHang and returns its error once it ends; it returns after
// the process has the request.
func hang(t *testing.T, p *Pool, ctx context.Context) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := p.Test(ctx, TestHang, 0)
		errc <- err
	}()
	testenv.WaitFor(t, 10*time.Second, "the process hanging", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for pr := range p.live {
			if strings.Contains(pr.stderr.String(), hangNotice) {
				return true
			}
		}
		return false
	})
	return errc
}

// TestKilledMidRequest: a process killed (SIGKILL) while it works on a
// request fails that request; it is counted as a crash and replaced.
func TestKilledMidRequest(t *testing.T) {
	p := testPool(t, Config{Processes: 1})
	pid := mustDecode(t, p)
	errc := hang(t, p, context.Background())
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrProcess) || !strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("request of the killed process: %v", err)
	}
	if st := p.Stats(); st.Restarts[ReasonCrash] != 1 {
		t.Fatalf("stats %+v", st)
	}
	if got := mustDecode(t, p); got == pid {
		t.Fatal("the killed process answered again")
	}
}

// TestHungProcessKilledAtDeadline: a process that does not answer by the
// request's deadline (the pool's Timeout, or the context's) is killed and
// replaced; the request fails.
func TestHungProcessKilledAtDeadline(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		p := testPool(t, Config{Processes: 1, Timeout: 300 * time.Millisecond})
		_, err := p.Test(context.Background(), TestHang, 0)
		if !errors.Is(err, ErrProcess) || p.Stats().Restarts[ReasonTimeout] != 1 {
			t.Fatalf("hang: %v, stats %+v", err, p.Stats())
		}
	})
	t.Run("context", func(t *testing.T) {
		p := testPool(t, Config{Processes: 1})
		pid := mustDecode(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := p.Test(ctx, TestHang, 0)
		if !errors.Is(err, ErrProcess) || p.Stats().Restarts[ReasonTimeout] != 1 {
			t.Fatalf("hang: %v, stats %+v", err, p.Stats())
		}
		if _, err := syscall.Getpgid(pid); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("the hung process %d still exists: %v", pid, err)
		}
		if got := mustDecode(t, p); got == pid {
			t.Fatal("the hung process answered again")
		}
	})
}

// limitAboveIdle is a memory limit 256 MiB above what a process that
// decoded a keyframe maps (more under the race detector).
func limitAboveIdle(t *testing.T) int64 {
	idle := testPool(t, Config{Processes: 1, MemoryLimit: -1})
	defer idle.Close()
	return vmData(t, mustDecode(t, idle)) + 256<<20
}

// TestMemoryLimit: a process asked to allocate past its limit dies; the
// request fails, the restart is counted as memory, and the next request
// gets a new process. Under the limit, it allocates.
func TestMemoryLimit(t *testing.T) {
	limit := limitAboveIdle(t)
	p := testPool(t, Config{Processes: 1, MemoryLimit: limit})
	if _, err := p.Test(context.Background(), TestAlloc, 16<<20); err != nil {
		t.Fatalf("16 MiB under a limit of %d MiB: %v", limit>>20, err)
	}
	pid := p.Stats().PIDs[0]
	_, err := p.Test(context.Background(), TestAlloc, 2<<30)
	if !errors.Is(err, ErrProcess) {
		t.Fatalf("2 GiB: %v, want ErrProcess", err)
	}
	if st := p.Stats(); st.Restarts[ReasonMemory] != 1 {
		t.Fatalf("stats %+v (%v)", st, err)
	}
	if got := mustDecode(t, p); got == pid {
		t.Fatal("the process past its limit answered again")
	}
}

// vmData returns process pid's data segment size (VmData), bytes.
func vmData(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmData:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmData")
	return 0
}

// TestProtocolViolation: a process whose answer does not parse is killed
// and replaced; the request fails.
func TestProtocolViolation(t *testing.T) {
	p := testPool(t, Config{Processes: 1, Command: testCommand(t, badSubcommand)})
	_, err := p.Decode(context.Background(), stillJPEG(fixture(t, synth.CodecH264)))
	if !errors.Is(err, ErrProcess) || !errors.Is(err, ErrProtocol) || p.Stats().Restarts[ReasonProtocol] != 1 {
		t.Fatalf("decode: %v, stats %+v", err, p.Stats())
	}
}

// TestStartFailure: a command that does not start, or never says hello,
// fails the request with ErrStart; starts are retried after a pause, not
// at every request.
func TestStartFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  []string
	}{
		{"missing", []string{"/nonexistent/vigia", Subcommand}},
		{"silent", []string{"/bin/sh", "-c", "exec sleep 60"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := testPool(t, Config{Processes: 1, Command: tc.cmd, StartTimeout: 300 * time.Millisecond})
			req := stillJPEG(fixture(t, synth.CodecH264))
			if _, err := p.Decode(context.Background(), req); !errors.Is(err, ErrStart) {
				t.Fatalf("first request: %v, want ErrStart", err)
			}
			if _, err := p.Decode(context.Background(), req); !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "next try") {
				t.Fatalf("second request: %v, want ErrStart with the next try", err)
			}
			if st := p.Stats(); st.StartFailures != 1 || st.Processes != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestConcurrentRequests: requests from many goroutines share the
// processes.
func TestConcurrentRequests(t *testing.T) {
	p := testPool(t, Config{Processes: 2})
	clip := fixture(t, synth.CodecH265)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 {
				if _, err := p.Decode(context.Background(), stillJPEG(clip)); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if st := p.Stats(); st.Requests != 32 || st.Processes == 0 || st.Processes > 2 || restarts(p) != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestCloseDuringRequest: Close kills the processes; the request in
// progress fails, nothing is counted as a restart, later requests get
// ErrClosed.
func TestCloseDuringRequest(t *testing.T) {
	p := testPool(t, Config{Processes: 1})
	errc := hang(t, p, context.Background())
	p.Close()
	if err := <-errc; err == nil {
		t.Fatal("the request survived Close")
	}
	if _, err := p.Decode(context.Background(), stillJPEG(fixture(t, synth.CodecH264))); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if st := p.Stats(); restarts(p) != 0 || st.Processes != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestTestOpsRefused: a process started without --test-ops refuses them
// and goes on.
func TestTestOpsRefused(t *testing.T) {
	p := New(Config{Processes: 1, Command: testCommand(t, Subcommand)})
	defer p.Close()
	if _, err := p.Test(context.Background(), TestCrash, 0); !errors.Is(err, ErrTestOps) {
		t.Fatalf("crash without --test-ops: %v", err)
	}
	if restarts(p) != 0 || p.Stats().Processes != 1 {
		t.Fatalf("stats %+v", p.Stats())
	}
}

func TestUnavailableWithoutCommand(t *testing.T) {
	p := New(Config{})
	defer p.Close()
	if p.Available() {
		t.Fatal("available without a command")
	}
	if _, err := p.Decode(context.Background(), stillJPEG(fixture(t, synth.CodecH264))); !errors.Is(err, decoder.ErrUnavailable) {
		t.Fatalf("decode: %v", err)
	}
}

// TestIdleProcessStopped: a process without a request for IdleTimeout is
// stopped, not counted as a restart; the next request starts another.
func TestIdleProcessStopped(t *testing.T) {
	p := testPool(t, Config{Processes: 1, IdleTimeout: 200 * time.Millisecond})
	pid := mustDecode(t, p)
	testenv.WaitFor(t, 10*time.Second, "the idle process stopped", func() bool { return p.Stats().Processes == 0 })
	if _, err := syscall.Getpgid(pid); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the idle process %d still exists: %v", pid, err)
	}
	if got := mustDecode(t, p); got == pid || restarts(p) != 0 {
		t.Fatalf("process %d (was %d), %d restarts", got, pid, restarts(p))
	}
}

// TestOneProcessForRequestsOneAtATime: requests that do not overlap keep
// using one process; a second starts only when they overlap.
func TestOneProcessForRequestsOneAtATime(t *testing.T) {
	p := testPool(t, Config{Processes: 2})
	pid := mustDecode(t, p)
	for range 4 {
		if got := mustDecode(t, p); got != pid {
			t.Fatalf("request went to process %d, not the running %d", got, pid)
		}
	}
	errc := hang(t, p, context.Background())
	if _, err := p.Decode(context.Background(), stillJPEG(fixture(t, synth.CodecH264))); err != nil {
		t.Fatal(err)
	}
	if n := p.Stats().Processes; n != 2 {
		t.Fatalf("%d processes while one hangs and another request came, want 2", n)
	}
	p.Close()
	<-errc
}

// TestContextEndedBeforeTheRequest: a request whose context has ended by
// the time it has a process fails without costing the process.
func TestContextEndedBeforeTheRequest(t *testing.T) {
	p := testPool(t, Config{Processes: 1})
	pid := mustDecode(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Decode(ctx, stillJPEG(fixture(t, synth.CodecH264))); !errors.Is(err, context.Canceled) {
		t.Fatalf("decode: %v, want context.Canceled", err)
	}
	if got := mustDecode(t, p); got != pid || restarts(p) != 0 {
		t.Fatalf("process %d (was %d), %d restarts", got, pid, restarts(p))
	}
}
