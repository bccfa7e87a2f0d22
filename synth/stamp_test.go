package synth

import (
	"bytes"
	"os/exec"
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
