package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// ffTool returns the path of an FFmpeg binary, failing the test when it is
// missing: the interop tests are part of the suite, not optional.
func ffTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found in PATH: install FFmpeg (make deps, or apt-get install ffmpeg): %v", name, err)
	}
	return p
}

type probeStream struct {
	CodecType string `json:"codec_type"`
	CodecName string `json:"codec_name"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	NbFrames  string `json:"nb_read_frames"`
}

func ffprobe(t *testing.T, args ...string) []probeStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args = append([]string{"-v", "error", "-of", "json", "-show_streams"}, args...)
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, ffTool(t, "ffprobe"), args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ffprobe %v: %v\n%s", args, err, stderr.String())
	}
	var res struct {
		Streams []probeStream `json:"streams"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ffprobe output: %v\n%s", err, out)
	}
	return res.Streams
}

func checkStreams(t *testing.T, where string, got []probeStream, codec string, w, h int, audio bool) {
	t.Helper()
	var video, aac int
	for _, st := range got {
		switch st.CodecType {
		case "video":
			video++
			if st.CodecName != codec || st.Width != w || st.Height != h {
				t.Errorf("%s: video %s %dx%d, want %s %dx%d", where, st.CodecName, st.Width, st.Height, codec, w, h)
			}
		case "audio":
			if st.CodecName == "aac" {
				aac++
			}
		}
	}
	if video != 1 {
		t.Errorf("%s: %d video streams, want 1", where, video)
	}
	if want := map[bool]int{true: 1, false: 0}[audio]; aac != want {
		t.Errorf("%s: %d aac streams, want %d", where, aac, want)
	}
}

func TestFFmpegInterop(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		spec   CameraSpec
		ffName string
	}{
		{"h264 audio", CameraSpec{Path: "h264", Codec: CodecH264, Audio: true}, "h264"},
		{"h265", CameraSpec{Path: "h265", Codec: CodecH265}, "hevc"},
		{"h264 auth", CameraSpec{Path: "auth", Codec: CodecH264, User: "u", Pass: "p"}, "h264"},
	}
	specs := make([]CameraSpec, len(cases))
	for i, tc := range cases {
		specs[i] = tc.spec
	}
	s := startServer(t, specs...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url := s.URL(tc.spec.Path)
			if tc.spec.User != "" {
				url = "rtsp://" + tc.spec.User + ":" + tc.spec.Pass + "@" + s.Addr() + "/" + tc.spec.Path
			}
			live := ffprobe(t, "-rtsp_transport", "tcp", url)
			checkStreams(t, "live", live, tc.ffName, 1280, 720, tc.spec.Audio)

			out := filepath.Join(t.TempDir(), "out.mkv")
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, ffTool(t, "ffmpeg"), "-v", "error", "-rtsp_transport", "tcp",
				"-i", url, "-t", "3", "-c", "copy", "-y", out)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("ffmpeg copy: %v\n%s", err, msg)
			}
			file := ffprobe(t, "-count_frames", out)
			checkStreams(t, "recorded", file, tc.ffName, 1280, 720, tc.spec.Audio)
			for _, st := range file {
				if n, _ := strconv.Atoi(st.NbFrames); st.CodecType == "video" && n < 15 {
					t.Errorf("recorded %q video frames, want at least 15 (3 s at 15 fps)", st.NbFrames)
				}
			}
			// The recording decodes without errors.
			dec := exec.CommandContext(ctx, ffTool(t, "ffmpeg"), "-v", "error", "-i", out, "-f", "null", "-")
			if msg, err := dec.CombinedOutput(); err != nil || len(bytes.TrimSpace(msg)) > 0 {
				t.Errorf("decoding the recording: %v\n%s", err, msg)
			}
		})
	}
}
