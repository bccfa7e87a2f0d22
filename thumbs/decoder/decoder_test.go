//go:build cgo

package decoder

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"math"
	"os/exec"
	"testing"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// ffmpegGray decodes the Annex-B stream with FFmpeg and returns frame n's
// luma at w x h (full range).
func ffmpegGray(t *testing.T, stream []byte, format string, n, w, h int) *image.Gray {
	t.Helper()
	cmd := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-f", format, "-i", "-",
		"-vf", "select=eq(n\\,"+itoa(n)+"),scale="+itoa(w)+":"+itoa(h)+":flags=area:out_range=full,format=gray",
		"-frames:v", "1", "-f", "rawvideo", "-")
	cmd.Stdin = bytes.NewReader(stream)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ffmpeg: %v", err)
	}
	if len(out) != w*h {
		t.Fatalf("ffmpeg gave %d bytes, want %d", len(out), w*h)
	}
	return &image.Gray{Pix: out, Stride: w, Rect: image.Rect(0, 0, w, h)}
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

func psnrGray(a, b *image.Gray) float64 {
	var se float64
	for i := range a.Pix {
		d := float64(a.Pix[i]) - float64(b.Pix[i])
		se += d * d
	}
	mse := se / float64(len(a.Pix))
	if mse == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(255*255/mse)
}

func clipStream(c *synth.Clip) []byte {
	var out []byte
	for _, u := range c.Units {
		b, n := appendAnnexB(nil, u.NALUs)
		out = append(out, b[:n]...)
	}
	return out
}

func TestDecodeMatchesFFmpeg(t *testing.T) {
	for _, tc := range []struct {
		name, codec, format string
		mc                  media.Codec
	}{
		{"h264", synth.CodecH264, "h264", media.H264},
		{"h265", synth.CodecH265, "hevc", media.H265},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clip, err := synth.Fixture(tc.codec, true)
			if err != nil {
				t.Fatal(err)
			}
			d, err := New(tc.mc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			// Keyframe alone, then the stream from the start up to frame 7.
			ok, err := d.DecodeStill(clip.Units[0].NALUs)
			if err != nil || !ok {
				t.Fatalf("keyframe: ok=%v err=%v", ok, err)
			}
			if w, h := d.Size(); w != clip.Width || h != clip.Height {
				t.Fatalf("size %dx%d, want %dx%d", w, h, clip.Width, clip.Height)
			}
			g, err := d.Gray(0, nil)
			if err != nil {
				t.Fatal(err)
			}
			stream := clipStream(clip)
			want := ffmpegGray(t, stream, tc.format, 0, clip.Width, clip.Height)
			if p := psnrGray(g, want); p < 40 {
				t.Fatalf("keyframe luma PSNR %.1f dB against FFmpeg, want ≥ 40", p)
			}
			for i := 0; i <= 7; i++ {
				ok, err := d.Decode(clip.Units[i].NALUs)
				if err != nil || !ok {
					t.Fatalf("frame %d: ok=%v err=%v", i, ok, err)
				}
			}
			small, err := d.Gray(160, nil)
			if err != nil {
				t.Fatal(err)
			}
			if small.Rect.Dx() != 160 || small.Rect.Dy() != 90 {
				t.Fatalf("scaled to %v, want 160x90", small.Rect)
			}
			want7 := ffmpegGray(t, stream, tc.format, 7, 160, 90)
			p7 := psnrGray(small, want7)
			want0 := ffmpegGray(t, stream, tc.format, 0, 160, 90)
			p0 := psnrGray(small, want0)
			t.Logf("frame 7 at 160x90: PSNR %.1f dB against FFmpeg's frame 7, %.1f dB against frame 0", p7, p0)
			if p7 < 35 || p7 <= p0 {
				t.Fatalf("frame 7 PSNR %.1f dB (frame 0: %.1f dB), want ≥ 35 and above frame 0's", p7, p0)
			}
			img, err := d.YCbCr(320)
			if err != nil {
				t.Fatal(err)
			}
			if img.Rect.Dx() != 320 || img.Rect.Dy() != 180 {
				t.Fatalf("YCbCr %v, want 320x180", img.Rect)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	if _, err := New(media.AAC, Options{}); !errors.Is(err, ErrCodec) {
		t.Fatalf("AAC: %v, want ErrCodec", err)
	}
	d, err := New(media.H264, Options{Fast: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Gray(0, nil); !errors.Is(err, ErrNoPicture) {
		t.Fatalf("gray before decode: %v", err)
	}
	if _, err := d.Decode(nil); !errors.Is(err, ErrDecode) {
		t.Fatalf("empty unit: %v", err)
	}
	// Garbage never panics; it yields an error or no picture.
	for i := 0; i < 20; i++ {
		_, _ = d.Decode([][]byte{{0x65, byte(i), 0xff, 0x00, 0x12}})
	}
	d.Close()
	d.Close()
	if _, err := d.Decode([][]byte{{0x65}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	_ = color.Gray{}
}

func TestScaledSize(t *testing.T) {
	for _, tc := range []struct {
		name              string
		sw, sh, w, ww, wh int
	}{
		{"720p to 320", 1280, 720, 320, 320, 180},
		{"keep", 1280, 720, 0, 1280, 720},
		{"no enlarge", 640, 360, 1280, 640, 360},
		{"odd", 1920, 1080, 321, 320, 180},
		{"tall", 720, 1280, 160, 160, 284},
		{"zero", 0, 0, 10, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, h := ScaledSize(tc.sw, tc.sh, tc.w)
			if w != tc.ww || h != tc.wh {
				t.Fatalf("got %dx%d, want %dx%d", w, h, tc.ww, tc.wh)
			}
		})
	}
}
