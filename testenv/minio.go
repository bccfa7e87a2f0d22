package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// minioReadyTimeout bounds how long Start waits for MinIO to answer.
const minioReadyTimeout = 60 * time.Second

// startAttempts is how many port pairs MinIO tries before the test fails.
const startAttempts = 3

// MinIOServer is a MinIO process serving one temporary directory on 127.0.0.1.
type MinIOServer struct {
	// Endpoint is host:port of the S3 API.
	Endpoint string
	// AccessKey is the root user.
	AccessKey string
	// SecretKey is the root password.
	SecretKey string

	t       testing.TB
	bin     string
	dir     string
	console string
	out     *Buffer

	// shared: the process's SharedMinIO, which no test stops.
	shared bool

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// MinIO starts a MinIO server with random credentials and ports and a fresh
// data directory, waits until it is live, and stops it when the test ends.
// Its output is logged if the test fails.
func MinIO(t testing.TB) *MinIOServer {
	t.Helper()
	s := &MinIOServer{
		t:         t,
		bin:       Tool(t, "minio"),
		dir:       t.TempDir(),
		AccessKey: "vigia" + randomHex(t, 6),
		SecretKey: randomHex(t, 16),
		Endpoint:  net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t))),
		console:   net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t))),
		out:       &Buffer{},
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			t.Logf("minio output:\n%s", s.out.String())
		}
	})
	// A port found free may be taken before MinIO binds it: try fresh ones.
	var err error
	for range startAttempts {
		if err = s.start(); err == nil {
			return s
		}
		s.Endpoint = net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
		s.console = net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
	}
	t.Fatalf("minio: %v\noutput:\n%s", err, s.out.String())
	return nil
}

// shared is the MinIO server of SharedMinIO, one per test process.
var shared struct {
	once sync.Once
	s    *MinIOServer
	dir  string
}

// SharedMinIO returns the test process's shared MinIO server, starting it
// on the first call: for tests that only need a bucket of their own
// (NewBucketName), which is most of them. It saves a server start, about a
// second of CPU, per test. Stop and Start panic on it: a test that takes
// storage down uses MinIO, a server of its own. Its data stays until
// CloseSharedMinIO, which the package's TestMain calls after the tests.
func SharedMinIO(t testing.TB) *MinIOServer {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "vigia-minio-shared-")
		if err != nil {
			t.Fatalf("shared minio: %v", err)
		}
		shared.dir = dir
		s := &MinIOServer{
			bin:       Tool(t, "minio"),
			dir:       dir,
			AccessKey: "vigia" + randomHex(t, 6),
			SecretKey: randomHex(t, 16),
			out:       &Buffer{},
			shared:    true,
		}
		for range startAttempts {
			s.Endpoint = net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
			s.console = net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
			if err = s.start(); err == nil {
				shared.s = s
				return
			}
		}
		t.Fatalf("shared minio: %v\noutput:\n%s", err, s.out.String())
	})
	if shared.s == nil {
		t.Fatal("the shared MinIO did not start (see the first test that asked for it)")
	}
	if s := shared.s; s.exited() {
		t.Fatalf("the shared MinIO exited; output:\n%s", s.out.String())
	}
	return shared.s
}

// CloseSharedMinIO stops the shared MinIO server, if one was started, and
// removes its data. A TestMain calls it after m.Run.
func CloseSharedMinIO() {
	if shared.s != nil {
		shared.s.kill()
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
}

// DataDir returns the server's data directory. A benchmark that needs many
// objects may fill a bucket's folder there itself (MinIO reads objects
// written by other means, e.g. copies of one object's xl.meta).
func (s *MinIOServer) DataDir() string { return s.dir }

// URL returns the S3 endpoint as an http URL.
func (s *MinIOServer) URL() string { return "http://" + s.Endpoint }

// Start runs the server (again, after Stop) on the same port and directory
// and waits until it is live. It fails the test if MinIO does not come up.
func (s *MinIOServer) Start() {
	if s.shared {
		panic("testenv: Start on the shared MinIO: a test that stops storage takes a server of its own (testenv.MinIO)")
	}
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("minio: %v\noutput:\n%s", err, s.out.String())
	}
}

// start runs the process and waits until it is live, or kills it.
func (s *MinIOServer) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	cmd := exec.Command(s.bin, "server", "--quiet",
		"--address", s.Endpoint, "--console-address", s.console, s.dir)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+s.AccessKey,
		"MINIO_ROOT_PASSWORD="+s.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	cmd.Stdout = s.out
	cmd.Stderr = s.out
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() { // exits when the process does
		_ = cmd.Wait()
		close(done)
	}()
	if err := waitLive(s.URL()+"/minio/health/live", done); err != nil {
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("at %s: %w", s.Endpoint, err)
	}
	s.cmd, s.done = cmd, done
	return nil
}

// Stop kills the server and waits for it to exit; the data directory stays.
func (s *MinIOServer) Stop() {
	if s.shared {
		panic("testenv: Stop on the shared MinIO: a test that stops storage takes a server of its own (testenv.MinIO)")
	}
	s.kill()
}

// exited reports whether the process has exited since it was started.
func (s *MinIOServer) exited() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		return true
	}
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// kill kills the process and waits for it to exit.
func (s *MinIOServer) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd, s.done = nil, nil
}

// waitLive polls url until it answers 200, the process exits, or the timeout.
func waitLive(url string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), minioReadyTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("process exited before it was live")
		case <-ctx.Done():
			return fmt.Errorf("not live after %v", minioReadyTimeout)
		case <-tick.C:
		}
	}
}
