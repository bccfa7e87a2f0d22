package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vigia/vigia/testenv"
)

// The interop matrix publishes clips encoded by FFmpeg once per codec
// configuration and kept in a cache directory beside the test tools
// (~/.cache/vigia/interop-clips), named by a hash of how they were made:
// a later run, or another cell, reuses them without encoding.

const (
	toneHz      = 440 // the audio clips' tone; beeps are four times higher
	clipSeconds = 20  // long enough for four 2 s segments after a late join; never looped (FFmpeg's loop shifts timestamps at the seam)
	clipFPS     = 15
	clipGOP     = 15 // a keyframe every second
)

// videoConfig is one way of encoding the clips' video.
type videoConfig struct {
	name    string
	codec   string // ffprobe's name: h264, hevc
	bframes bool
	// sizes are the picture sizes, one part of the clip each (more than one:
	// the resolution changes mid-stream).
	sizes [][2]int
	args  []string // encoder arguments
}

func x265(bframes int, extra string) []string {
	return []string{"-c:v", "libx265", "-preset", "ultrafast", "-x265-params",
		fmt.Sprintf("keyint=%d:min-keyint=%d:scenecut=0:open-gop=0:bframes=%d:log-level=error%s", clipGOP, clipGOP, bframes, extra)}
}

func x264(profile, preset string, bframes int, extra ...string) []string {
	a := []string{"-c:v", "libx264", "-profile:v", profile, "-preset", preset, "-bf", fmt.Sprint(bframes),
		"-g", fmt.Sprint(clipGOP), "-keyint_min", fmt.Sprint(clipGOP), "-sc_threshold", "0"}
	if len(extra) > 0 {
		a = append(a, "-x264-params", strings.Join(extra, ":"))
	}
	return a
}

var (
	sd            = [][2]int{{640, 360}}
	videoConfigs  = map[string]videoConfig{}
	videoConfigsL = []videoConfig{
		{name: "h264-baseline", codec: "h264", sizes: sd, args: x264("baseline", "ultrafast", 0)},
		{name: "h264-main", codec: "h264", sizes: sd, args: x264("main", "superfast", 0)},
		{name: "h264-main-b", codec: "h264", bframes: true, sizes: sd, args: x264("main", "superfast", 2)},
		{name: "h264-high", codec: "h264", sizes: sd, args: x264("high", "superfast", 0)},
		{name: "h264-high-b", codec: "h264", bframes: true, sizes: sd, args: x264("high", "superfast", 3)},
		{name: "h265", codec: "hevc", sizes: sd, args: x265(0, "")},
		{name: "h265-b", codec: "hevc", bframes: true, sizes: sd, args: x265(3, "")},
		// Parameter sets before every keyframe, in-band, as well as in
		// the MP4's sample description (and so in FFmpeg's SDP).
		{name: "h264-inband", codec: "h264", sizes: sd, args: x264("high", "superfast", 0, "repeat-headers=1")},
		// 640x360 for 10 s, then 480x270: the new parameter sets come
		// in-band with the first keyframe at the new size.
		{name: "h264-resize-b", codec: "h264", bframes: true, sizes: [][2]int{{640, 360}, {480, 270}},
			args: x264("high", "superfast", 3, "repeat-headers=1")},
	}
)

// audioConfig is one way of encoding the clips' AAC-LC audio.
type audioConfig struct {
	name     string
	rate     int
	channels int
	bitrate  string
}

var (
	audioConfigs  = map[string]audioConfig{}
	audioConfigsL = []audioConfig{
		{"aac8k-mono", 8000, 1, "16k"},
		{"aac8k-stereo", 8000, 2, "24k"},
		{"aac16k-mono", 16000, 1, "32k"},
		{"aac16k-stereo", 16000, 2, "48k"},
		{"aac48k-mono", 48000, 1, "64k"},
		{"aac48k-stereo", 48000, 2, "128k"},
		// 5.1 at 768 kbit/s: frames of about 4 KB, split over several RTP
		// packets by any packetizer.
		{"aac48k-51", 48000, 6, "768k"},
	}
)

func init() {
	for _, v := range videoConfigsL {
		videoConfigs[v.name] = v
	}
	for _, a := range audioConfigsL {
		audioConfigs[a.name] = a
	}
}

// clip is an MP4 of one video configuration and, unless audio is empty,
// one audio configuration, with the MD5s of its decoded video frames in
// presentation order (scaled to 320x180, so that parts of another size
// compare too).
type clip struct {
	path  string
	video videoConfig
	audio string
	md5s  []string
	index map[string]int // frame MD5 → its position
}

// clipCache makes and finds the matrix's clips (kept across runs by
// testenv.CachedClip); it is shared by the cells of a run.
type clipCache struct {
	mu    sync.Mutex
	clips map[string]*clip
}

func newClipCache(t *testing.T) *clipCache {
	t.Helper()
	for _, tool := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: run make deps", tool)
		}
	}
	return &clipCache{clips: map[string]*clip{}}
}

func ffmpegRun(args ...string) error {
	args = append([]string{"-hide_banner", "-loglevel", "error", "-y"}, args...)
	if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("ffmpeg %s: %v: %s", strings.Join(args, " "), err, firstLines(string(out), 5))
	}
	return nil
}

// videoClip encodes the video of v: clipSeconds of FFmpeg's testsrc (a
// frame counter in the picture: every frame differs).
func (c *clipCache) videoClip(v videoConfig) (string, error) {
	key := fmt.Sprint(v.sizes, v.args, clipSeconds, clipFPS)
	return testenv.CachedClip(key, "v-"+v.name, ".mp4", func(out string) error {
		per := clipSeconds / len(v.sizes)
		var parts []string
		for i, s := range v.sizes {
			part := out
			if len(v.sizes) > 1 {
				part = fmt.Sprintf("%s.part%d.mp4", out, i)
				defer os.Remove(part)
			}
			args := []string{"-f", "lavfi", "-i", fmt.Sprintf("testsrc=size=%dx%d:rate=%d", s[0], s[1], clipFPS),
				"-t", fmt.Sprint(per), "-pix_fmt", "yuv420p"}
			args = append(append(args, v.args...), "-an", part)
			if err := ffmpegRun(args...); err != nil {
				return err
			}
			parts = append(parts, part)
		}
		if len(parts) == 1 {
			return nil
		}
		list := out + ".txt"
		defer os.Remove(list)
		var b strings.Builder
		for _, p := range parts {
			fmt.Fprintf(&b, "file '%s'\n", p)
		}
		if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
			return err
		}
		return ffmpegRun("-f", "concat", "-safe", "0", "-i", list, "-c", "copy", out)
	})
}

// audioClip encodes clipSeconds of a tone as AAC-LC, with a beep of four
// times its pitch for the first 40 ms of every second: at the frames of the
// video clip whose number is a multiple of clipFPS (lip sync, beepOffsets).
func (c *clipCache) audioClip(a audioConfig) (string, error) {
	key := fmt.Sprint(a, clipSeconds, "beep")
	return testenv.CachedClip(key, "a-"+a.name, ".m4a", func(out string) error {
		return ffmpegRun("-f", "lavfi", "-i", fmt.Sprintf("sine=frequency=%d:sample_rate=%d:beep_factor=4", toneHz, a.rate), "-t", fmt.Sprint(clipSeconds),
			"-c:a", "aac", "-ac", fmt.Sprint(a.channels), "-b:a", a.bitrate, out)
	})
}

// get returns the clip of video and audio (empty: none), making what is
// missing.
func (c *clipCache) get(video, audio string) (*clip, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	name := video + "+" + audio
	if cl, ok := c.clips[name]; ok {
		return cl, nil
	}
	v, ok := videoConfigs[video]
	if !ok {
		return nil, fmt.Errorf("no video configuration %q", video)
	}
	vpath, err := c.videoClip(v)
	if err != nil {
		return nil, err
	}
	cl := &clip{path: vpath, video: v, audio: audio}
	if audio != "" {
		a, ok := audioConfigs[audio]
		if !ok {
			return nil, fmt.Errorf("no audio configuration %q", audio)
		}
		apath, err := c.audioClip(a)
		if err != nil {
			return nil, err
		}
		cl.path, err = testenv.CachedClip(vpath+apath, "m-"+video+"-"+audio, ".mp4", func(out string) error {
			return ffmpegRun("-i", vpath, "-i", apath, "-map", "0:v", "-map", "1:a", "-c", "copy", out)
		})
		if err != nil {
			return nil, err
		}
	}
	sums, err := testenv.CachedClip(vpath, "md5-"+video, ".txt", func(out string) error {
		md5s, err := frameMD5s(vpath)
		if err != nil {
			return err
		}
		return os.WriteFile(out, []byte(strings.Join(md5s, "\n")+"\n"), 0o644)
	})
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(sums)
	if err != nil {
		return nil, err
	}
	cl.md5s = strings.Fields(string(b))
	cl.index = make(map[string]int, len(cl.md5s))
	for i, m := range cl.md5s {
		if _, dup := cl.index[m]; dup {
			return nil, fmt.Errorf("clip %s: frames %d and %d decode the same: frames cannot be told apart", name, cl.index[m], i)
		}
		cl.index[m] = i
	}
	if len(cl.md5s) != clipSeconds*clipFPS {
		return nil, fmt.Errorf("clip %s: %d frames, want %d", name, len(cl.md5s), clipSeconds*clipFPS)
	}
	c.clips[name] = cl
	return cl, nil
}

// frameMD5s decodes the video of path and returns the MD5 of each frame in
// presentation order, scaled to 320x180. Whatever FFmpeg says while
// decoding is an error.
func frameMD5s(path string) ([]string, error) {
	cmd := exec.Command("ffmpeg", "-hide_banner", "-v", "error", "-i", path, "-map", "0:v:0",
		"-vf", "scale=320:180:flags=neighbor", "-f", "framemd5", "-")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		return nil, fmt.Errorf("decoding %s: %v: %s", filepath.Base(path), err, firstLines(stderr.String(), 5))
	}
	var md5s []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Split(line, ",")
		md5s = append(md5s, strings.TrimSpace(f[len(f)-1]))
	}
	return md5s, nil
}
