package synth

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/pion/rtcp"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

// TestStampCameraSlowEncoder: a stamp camera whose encoder runs slower
// than real time (FFmpeg reading its pictures at 80 % of their rate, as
// on a loaded machine) drops pictures, as a camera does: its video keeps
// arriving within a fraction of a second of the instants its RTP
// timestamps and sender reports give. Written in a burst to an encoder
// that could not keep up, its pictures arrived later and later (here 0.2 s
// more each second) while its sound came on time.
func TestStampCameraSlowEncoder(t *testing.T) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal(err)
	}
	slow := filepath.Join(t.TempDir(), "ffmpeg")
	// The encoder reads its input, the camera's pictures, at 80 % of their
	// rate.
	script := "#!/bin/sh\nexec " + ffmpeg + " -readrate 0.8 \"$@\"\n"
	if err := os.WriteFile(slow, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := StartStampCamera(StampConfig{Audio: AudioPCMU, FFmpeg: slow})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	u, err := base.ParseURL(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	tcp := gortsplib.TransportTCP
	cl := &gortsplib.Client{Scheme: u.Scheme, Host: u.Host, Transport: &tcp}
	if err := cl.Start2(); err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	desc, _, err := cl.Describe(u)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.SetupAll(desc.BaseURL, desc.Medias); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		sr     *rtcp.SenderReport // the video's last
		late   time.Duration      // the latest video packet's delay
		frames int
	)
	cl.OnPacketRTCPAny(func(medi *description.Media, pkt rtcp.Packet) {
		if r, ok := pkt.(*rtcp.SenderReport); ok && medi.Type == description.MediaTypeVideo {
			mu.Lock()
			sr = r
			mu.Unlock()
		}
	})
	cl.OnPacketRTPAny(func(medi *description.Media, _ format.Format, pkt *rtp.Packet) {
		if medi.Type != description.MediaTypeVideo {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if sr == nil {
			return
		}
		// The instant of the packet's timestamp, by the camera's report.
		at := media.NTPToTime(sr.NTPTime).Add(time.Duration(int32(pkt.Timestamp-sr.RTPTime)) * time.Second / 90000)
		late = time.Since(at)
		frames++
	})
	if _, err := cl.Play(nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var worst time.Duration
	testenv.WaitFor(t, 20*time.Second, "8 s of video", func() bool {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(start) > 3*time.Second {
			worst = max(worst, late)
		}
		return time.Since(start) > 8*time.Second && frames > 100
	})
	t.Logf("%d video packets, up to %v late", frames, worst)
	if worst > time.Second {
		t.Errorf("video up to %v late, want a camera that drops pictures (%d frames)", worst, frames)
	}
}
