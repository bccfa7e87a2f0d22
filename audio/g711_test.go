package audio

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ffmpegConvert runs FFmpeg from raw format in to raw format out (8 kHz
// mono) and returns the output bytes.
func ffmpegConvert(t *testing.T, data []byte, in, out string) []byte {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("ffmpeg not found: run make deps")
	}
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-v", "error", "-f", in, "-ar", "8000", "-ac", "1", "-i", src, "-f", out, dst}
	if msg, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v: %s", args, err, msg)
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestG711DecodeMatchesFFmpeg: every µ-law and A-law byte decodes to the
// sample FFmpeg's pcm_mulaw and pcm_alaw decoders give.
func TestG711DecodeMatchesFFmpeg(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for _, tc := range []struct {
		name string
		ulaw bool
	}{{"mulaw", true}, {"alaw", false}} {
		t.Run(tc.name, func(t *testing.T) {
			want := ffmpegConvert(t, all, tc.name, "s16le")
			got := DecodeG711(nil, all, tc.ulaw)
			if len(want) != 2*len(got) {
				t.Fatalf("ffmpeg gave %d bytes for 256 samples", len(want))
			}
			for i, s := range got {
				if w := int16(binary.LittleEndian.Uint16(want[2*i:])); s != w {
					t.Errorf("byte %#02x: %d, ffmpeg %d", i, s, w)
				}
				if G711Sample(byte(i), tc.ulaw) != s {
					t.Errorf("byte %#02x: G711Sample differs from DecodeG711", i)
				}
			}
		})
	}
}

// TestG711EncodeMatchesFFmpeg: every 16-bit sample encodes to the byte
// FFmpeg's encoders give, and each byte's own sample encodes back to it.
func TestG711EncodeMatchesFFmpeg(t *testing.T) {
	samples := make([]int16, 65536)
	raw := make([]byte, 2*len(samples))
	for i := range samples {
		samples[i] = int16(i - 32768)
		binary.LittleEndian.PutUint16(raw[2*i:], uint16(samples[i]))
	}
	for _, tc := range []struct {
		name string
		ulaw bool
	}{{"mulaw", true}, {"alaw", false}} {
		t.Run(tc.name, func(t *testing.T) {
			want := ffmpegConvert(t, raw, "s16le", tc.name)
			got := EncodeG711(nil, samples, tc.ulaw)
			if len(want) != len(got) {
				t.Fatalf("ffmpeg gave %d bytes for %d samples", len(want), len(got))
			}
			diff := 0
			for i := range got {
				if got[i] != want[i] {
					if diff < 5 {
						t.Errorf("sample %d: %#02x, ffmpeg %#02x", samples[i], got[i], want[i])
					}
					diff++
				}
			}
			if diff > 0 {
				t.Errorf("%d of 65536 samples encode differently from ffmpeg", diff)
			}
			for b := range 256 {
				if tc.ulaw && b == 0x7f {
					continue // µ-law's negative zero: zero encodes as 0xff
				}
				if e := EncodeG711(nil, []int16{G711Sample(byte(b), tc.ulaw)}, tc.ulaw)[0]; e != byte(b) {
					t.Errorf("byte %#02x decodes and encodes back to %#02x", b, e)
				}
			}
		})
	}
}
