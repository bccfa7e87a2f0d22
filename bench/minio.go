package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// minioReadyTimeout bounds how long MinIO may take to come up.
const minioReadyTimeout = 60 * time.Second

// MinIOPath returns where the MinIO server binary is expected:
// $VIGIA_TOOLS/minio, or ${XDG_CACHE_HOME:-$HOME/.cache}/vigia/tools/minio
// (the tools directory the test helpers use).
func MinIOPath() string {
	if d := os.Getenv("VIGIA_TOOLS"); d != "" {
		return filepath.Join(d, "minio")
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "vigia", "tools", "minio")
}

// minio is a MinIO server on 127.0.0.1 serving one directory, with random
// credentials.
type minio struct {
	*child
	endpoint  string
	accessKey string
	secretKey string
}

// startMinIO starts bin serving dir and waits until it is live.
func startMinIO(ctx context.Context, bin, dir string) (*minio, error) {
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("minio server binary not found at %s (set VIGIA_TOOLS): %w", bin, errors.Join(err, os.ErrNotExist))
	}
	api, err := freePort()
	if err != nil {
		return nil, err
	}
	console, err := freePort()
	if err != nil {
		return nil, err
	}
	m := &minio{
		endpoint:  net.JoinHostPort("127.0.0.1", strconv.Itoa(api)),
		accessKey: "bench" + randomHex(6),
		secretKey: randomHex(16),
	}
	cmd := exec.Command(bin, "server", "--quiet", "--address", m.endpoint,
		"--console-address", net.JoinHostPort("127.0.0.1", strconv.Itoa(console)), dir)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+m.accessKey,
		"MINIO_ROOT_PASSWORD="+m.secretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
	)
	if m.child, err = startChild("minio", cmd); err != nil {
		return nil, err
	}
	if err := m.waitLive(ctx); err != nil {
		m.stop(5 * time.Second)
		return nil, err
	}
	return m, nil
}

// waitLive polls the health endpoint until it answers 200.
func (m *minio) waitLive(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, minioReadyTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	url := "http://" + m.endpoint + "/minio/health/live"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("minio: %w", err)
		}
		if resp, err := client.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-m.done:
			return m.exitError()
		case <-ctx.Done():
			return fmt.Errorf("minio at %s not live: %w; output:\n%s", m.endpoint, ctx.Err(), m.out.String())
		case <-tick.C:
		}
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// randomHex returns n random bytes as hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}
