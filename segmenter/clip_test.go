package segmenter

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"

	"github.com/vigia/vigia/media"
)

// testClip is an encoded clip split into access units.
type testClip struct {
	codec media.Codec
	aus   [][][]byte
	keys  []bool
	fps   int
	audio [][]byte // raw AAC frames
	asc   *mpeg4audio.AudioSpecificConfig
}

// makeClip encodes a clip with FFmpeg (no B-frames, AUD before each access
// unit) and splits it into access units.
func makeClip(t *testing.T, codec media.Codec, seconds, fps, gop int, withAudio bool) *testClip {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatalf("ffmpeg not found: run make deps")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "clip.es")
	args := []string{"-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
		"testsrc2=size=320x240:rate=" + itoa(fps), "-t", itoa(seconds), "-pix_fmt", "yuv420p"}
	if codec == media.H265 {
		args = append(args, "-c:v", "libx265", "-x265-params", "keyint="+itoa(gop)+":min-keyint="+itoa(gop)+":bframes=0:scenecut=0:log-level=error",
			"-bsf:v", "hevc_metadata=aud=insert", "-f", "hevc", out)
	} else {
		args = append(args, "-c:v", "libx264", "-g", itoa(gop), "-keyint_min", itoa(gop), "-sc_threshold", "0", "-bf", "0",
			"-bsf:v", "h264_metadata=aud=insert", "-f", "h264", out)
	}
	if b, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	c := &testClip{codec: codec, fps: fps}
	var cur [][]byte
	key := false
	for _, n := range splitAnnexB(b) {
		aud := false
		if codec == media.H265 {
			typ := (n[0] >> 1) & 0x3f
			aud = typ == 35
			if typ >= 16 && typ <= 21 {
				key = true
			}
		} else {
			typ := n[0] & 0x1f
			aud = typ == 9
			if typ == 5 {
				key = true
			}
		}
		if aud {
			if len(cur) > 0 {
				c.aus = append(c.aus, cur)
				c.keys = append(c.keys, key)
			}
			cur, key = nil, false
			continue
		}
		cur = append(cur, n)
	}
	if len(cur) > 0 {
		c.aus = append(c.aus, cur)
		c.keys = append(c.keys, key)
	}
	if withAudio {
		aout := filepath.Join(dir, "clip.aac")
		if b, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
			"sine=frequency=440:sample_rate=16000", "-t", itoa(seconds), "-ac", "1", "-c:a", "aac", "-f", "adts", aout).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg aac: %v: %s", err, b)
		}
		ab, err := os.ReadFile(aout)
		if err != nil {
			t.Fatal(err)
		}
		var pkts mpeg4audio.ADTSPackets
		if err := pkts.Unmarshal(ab); err != nil {
			t.Fatal(err)
		}
		for _, p := range pkts {
			c.audio = append(c.audio, p.AU)
		}
		c.asc = &mpeg4audio.AudioSpecificConfig{Type: pkts[0].Type, SampleRate: pkts[0].SampleRate, ChannelConfig: pkts[0].ChannelConfig}
	}
	return c
}

func itoa(i int) string { return strconv.Itoa(i) }

// splitAnnexB returns the NAL units of an Annex-B stream.
func splitAnnexB(b []byte) [][]byte {
	var out [][]byte
	start := -1
	i := 0
	for i+3 <= len(b) {
		if b[i] == 0 && b[i+1] == 0 && b[i+2] == 1 {
			if start >= 0 {
				end := i
				if end > start && b[end-1] == 0 {
					end--
				}
				out = append(out, b[start:end])
			}
			i += 3
			start = i
			continue
		}
		i++
	}
	if start >= 0 && start < len(b) {
		out = append(out, b[start:])
	}
	return out
}

// tracks returns the track list of the clip.
func (c *testClip) tracks() []*media.Track {
	ts := []*media.Track{{Codec: c.codec, ClockRate: 90000}}
	if c.asc != nil {
		ts = append(ts, &media.Track{Codec: media.AAC, ClockRate: c.asc.SampleRate, AAC: c.asc})
	}
	return ts
}

// units returns n video units (looping the clip) interleaved with audio, with
// times starting at base.
func (c *testClip) units(n int, base time.Time) []*media.Unit {
	var out []*media.Unit
	frame := time.Second / time.Duration(c.fps)
	ai := 0
	var aDur time.Duration
	if c.asc != nil {
		aDur = time.Second * 1024 / time.Duration(c.asc.SampleRate)
	}
	for i := 0; i < n; i++ {
		d := time.Duration(i) * frame
		for c.asc != nil && time.Duration(ai)*aDur <= d {
			ad := time.Duration(ai) * aDur
			out = append(out, &media.Unit{Track: 1, PTS: ad, DTS: ad, Time: base.Add(ad), Payload: c.audio[ai%len(c.audio)]})
			ai++
		}
		k := i % len(c.aus)
		out = append(out, &media.Unit{Track: 0, PTS: d, DTS: d, Time: base.Add(d), Key: c.keys[k], NALUs: c.aus[k]})
	}
	return out
}
