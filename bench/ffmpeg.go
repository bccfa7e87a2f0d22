package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// ffmpegRecorder is one FFmpeg process recording one camera the way many
// NVRs do: RTSP over TCP, stream copy, a segment muxer writing MP4 files.
type ffmpegRecorder struct {
	*child
	dir string
}

// startFFmpeg starts one recorder of url writing segments of segment length
// into dir.
func startFFmpeg(bin, url, dir string, segment time.Duration) (*ffmpegRecorder, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ffmpeg output: %w", err)
	}
	cmd := exec.Command(bin, "-nostdin", "-loglevel", "error",
		"-rtsp_transport", "tcp", "-i", url,
		"-c", "copy", "-f", "segment",
		"-segment_time", strconv.FormatFloat(segment.Seconds(), 'f', -1, 64),
		"-reset_timestamps", "1",
		filepath.Join(dir, "%05d.mp4"))
	c, err := startChild("ffmpeg "+url, cmd)
	if err != nil {
		return nil, err
	}
	return &ffmpegRecorder{child: c, dir: dir}, nil
}

// output returns the number of files written and their total size.
func (f *ffmpegRecorder) output() (files int, bytes int64) {
	entries, err := os.ReadDir(f.dir)
	if err != nil {
		return 0, 0
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			files++
			bytes += fi.Size()
		}
	}
	return files, bytes
}
