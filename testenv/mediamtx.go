package testenv

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// MediaMTX returns an unpacked MediaMTX binary (FindMediaMTX); the test
// is skipped, saying why, when there is none: MediaMTX is not a Debian
// package nor a Go module here.
func MediaMTX(t testing.TB) string {
	t.Helper()
	p, err := FindMediaMTX()
	if err != nil {
		t.Skipf("MediaMTX not available: %v", err)
	}
	return p
}

// FindMediaMTX returns the MediaMTX binary (the peer recorder and RTSP
// server of ../shared/peers/README.md): $VIGIA_MEDIAMTX (make test sets it),
// or the peer shipped beside the repository (../shared/peers/mediamtx.xz,
// found from the test's package directory), unpacked once into the user's
// cache directory. Without either it says why.
func FindMediaMTX() (string, error) {
	if p := os.Getenv("VIGIA_MEDIAMTX"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("VIGIA_MEDIAMTX: %w", err)
		}
		return p, nil
	}
	var xzPath string
	for _, rel := range []string{"../../shared/peers/mediamtx.xz", "../shared/peers/mediamtx.xz", "../../../shared/peers/mediamtx.xz"} {
		if p, err := filepath.Abs(rel); err == nil {
			if _, err := os.Stat(p); err == nil {
				xzPath = p
				break
			}
		}
	}
	if xzPath == "" {
		return "", errors.New("no MediaMTX binary: set VIGIA_MEDIAMTX, or provide ../shared/peers/mediamtx.xz")
	}
	mediamtxOnce.Do(func() { mediamtxBin, mediamtxErr = unpackMediaMTX(xzPath) })
	if mediamtxErr != nil {
		return "", fmt.Errorf("unpacking %s: %w", xzPath, mediamtxErr)
	}
	return mediamtxBin, nil
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
	var stderr bytes.Buffer
	cmd := exec.Command("xz", "-dc", xzPath)
	cmd.Stdout, cmd.Stderr = tmp, &stderr
	if err := cmd.Run(); err != nil {
		_ = tmp.Close()
		return "", fmt.Errorf("xz: %v: %s", err, stderr.String())
	}
	if err := tmp.Chmod(0o755); err != nil {
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return bin, os.Rename(tmp.Name(), bin)
}
