package synth

import (
	"bytes"
	"encoding/binary"
	"math"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestStampRoundTrip checks that ReadStamp reads what DrawStamp drew, and
// refuses a picture without a stamp or with a damaged one.
func TestStampRoundTrip(t *testing.T) {
	const w, h = 640, 64
	pic := bytes.Repeat([]byte{stampGray}, w*h)
	luma := func(x, y int) byte { return pic[y*w+x] }
	if _, ok := ReadStamp(luma); ok {
		t.Fatal("a gray picture read as a stamp")
	}
	for _, at := range []time.Time{time.UnixMilli(0), time.UnixMilli(1<<48 - 1), time.Now()} {
		DrawStamp(pic, w, at)
		got, ok := ReadStamp(luma)
		if !ok || !got.Equal(time.UnixMilli(at.UnixMilli())) {
			t.Fatalf("stamp of %v read as %v (ok %v)", at.UnixMilli(), got.UnixMilli(), ok)
		}
	}
	x, y := stampOrigin(40) // flip one time bit
	pic[(y+StampBlock/2)*w+x+StampBlock/2] ^= 0xff
	if _, ok := ReadStamp(luma); ok {
		t.Fatal("a damaged stamp read as valid")
	}
}

// TestStampCamera pulls the stamp camera with FFmpeg and reads the stamp
// of the first picture it decodes: a time between the start of the pull
// and now.
func TestStampCamera(t *testing.T) {
	c, err := StartStampCamera(StampConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := time.Now().Add(-time.Second)
	const w, h = 640, 360
	out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-rtsp_transport", "tcp", "-i", c.URL(),
		"-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", "pipe:1").Output()
	if err != nil {
		t.Fatalf("ffmpeg: %v", err)
	}
	if len(out) != w*h {
		t.Fatalf("ffmpeg gave %d bytes, want one %dx%d picture", len(out), w, h)
	}
	got, ok := ReadStamp(func(x, y int) byte { return out[y*w+x] })
	if !ok {
		t.Fatal("no stamp in the decoded picture")
	}
	if got.Before(before) || got.After(time.Now()) {
		t.Fatalf("stamp %v outside [%v, now]", got, before)
	}
}

// TestStampCameraSound: the stamp camera's sound, AAC and µ-law, decoded
// by FFmpeg from its RTSP stream, is a beep of BeepHz for BeepLength every
// second, silence between.
func TestStampCameraSound(t *testing.T) {
	for _, codec := range []string{AudioAAC, AudioPCMU} {
		t.Run(codec, func(t *testing.T) {
			c, err := StartStampCamera(StampConfig{Audio: codec})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const rate = 16000
			out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-rtsp_transport", "tcp", "-allowed_media_types", "audio", "-i", c.URL(),
				"-t", "4.5", "-vn", "-f", "s16le", "-ac", "1", "-ar", strconv.Itoa(rate), "pipe:1").Output()
			if err != nil {
				t.Fatalf("ffmpeg: %v", err)
			}
			pcm := make([]int16, len(out)/2)
			for i := range pcm {
				pcm[i] = int16(binary.LittleEndian.Uint16(out[2*i:]))
			}
			// Beeps: runs of 5 ms blocks loud enough, apart by silence.
			const block = rate / 200
			var starts, ends []int
			loud := false
			for b := 0; (b+1)*block <= len(pcm); b++ {
				var sum float64
				for _, v := range pcm[b*block : (b+1)*block] {
					sum += float64(v) * float64(v)
				}
				l := math.Sqrt(sum/block) > 0.1*32767
				if l && !loud {
					starts = append(starts, b*block)
				} else if !l && loud {
					ends = append(ends, b*block)
				}
				loud = l
			}
			// Judged from the first beep that starts a second into the
			// sound: FFmpeg's first packets, while it finds the stream's
			// parameters on a loaded machine, lost 20 ms of one once.
			for len(starts) > 0 && starts[0] < rate {
				starts = starts[1:]
				if len(ends) > 0 {
					ends = ends[1:]
				}
			}
			if len(ends) < 2 {
				t.Fatalf("%d whole beeps in the last 3.5 s of 4.5 s of sound, want at least 2", len(ends))
			}
			for i := 0; i+1 < len(starts) && i < len(ends); i++ {
				length := time.Duration(ends[i]-starts[i]) * time.Second / rate
				every := time.Duration(starts[i+1]-starts[i]) * time.Second / rate
				if length < BeepLength-15*time.Millisecond || length > BeepLength+15*time.Millisecond {
					t.Errorf("beep %d lasts %v, want %v", i, length, BeepLength)
				}
				if every < time.Second-15*time.Millisecond || every > time.Second+15*time.Millisecond {
					t.Errorf("beep %d is followed by the next %v later, want 1 s", i, every)
				}
				n := 0
				beep := pcm[starts[i]+block : ends[i]-block]
				for j := 1; j < len(beep); j++ {
					if (beep[j-1] < 0) != (beep[j] < 0) {
						n++
					}
				}
				if f := float64(n) / 2 / (float64(len(beep)) / rate); math.Abs(f-BeepHz) > 20 {
					t.Errorf("beep %d at %.0f Hz, want %d Hz", i, f, BeepHz)
				}
			}
		})
	}
}
