package testenv

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// clipsDir is the directory of the clip cache, beside ToolsDir. Its name
// is the one it was first given, when only the interop matrix kept clips.
const clipsDir = "interop-clips"

// ffmpegVersion is FFmpeg's version line, read once: clips made by another
// FFmpeg are made anew.
var ffmpegVersion = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("ffmpeg", "-version").Output()
	if err != nil {
		return "", fmt.Errorf("ffmpeg not found (run make deps): %w", err)
	}
	version, _, _ := strings.Cut(string(out), "\n")
	return version, nil
})

// CachedClip returns the path of a file that make writes, typically a clip
// FFmpeg encodes for a test, kept across runs in a cache beside ToolsDir so
// that a machine encodes each once. The file is named by name, suffix and
// a hash of key (which must say everything the file depends on, such as
// FFmpeg's arguments) and of FFmpeg's version. make writes to the path it
// is given, which is renamed into place when make succeeds: runs side by
// side never see a half-written file.
func CachedClip(key, name, suffix string, make func(path string) error) (string, error) {
	version, err := ffmpegVersion()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(filepath.Dir(ToolsDir()), clipsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(version + "\n" + key))
	path := filepath.Join(dir, name+"-"+hex.EncodeToString(h[:6])+suffix)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	f, err := os.CreateTemp(dir, "."+name+"-*"+suffix) // one per maker, even in one process
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	if err := make(tmp); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}
