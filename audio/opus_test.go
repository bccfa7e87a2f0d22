package audio

import (
	"bufio"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigia/vigia/testenv"
)

// opusPacket is one recorded packet and its duration as FFmpeg reports it.
type opusPacket struct {
	data    []byte
	samples int
}

// recordedOpus reads testdata/opus_packets.txt: packets libopus made
// (through FFmpeg) with every frame duration and framing code, one per
// line as "samples hex".
func recordedOpus(t testing.TB) []opusPacket {
	t.Helper()
	f, err := os.Open("testdata/opus_packets.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []opusPacket
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		n, h, ok := strings.Cut(line, " ")
		samples, err1 := strconv.Atoi(n)
		data, err2 := hex.DecodeString(h)
		if !ok || err1 != nil || err2 != nil {
			t.Fatalf("bad line %q", line)
		}
		out = append(out, opusPacket{data, samples})
	}
	return out
}

// TestOpusSamplesRecorded: the duration of every recorded libopus packet
// is the one FFmpeg gave it.
func TestOpusSamplesRecorded(t *testing.T) {
	pkts := recordedOpus(t)
	codes := map[byte]bool{}
	for i, p := range pkts {
		got, err := OpusSamples(p.data)
		if err != nil || got != p.samples {
			t.Errorf("packet %d (toc %#02x): %d samples, %v; want %d", i, p.data[0], got, err, p.samples)
		}
		codes[p.data[0]&3] = true
	}
	if len(codes) != 4 {
		t.Errorf("recorded packets use framing codes %v, want all four", codes)
	}
}

// TestOpusSamplesFFmpeg encodes with libopus (through FFmpeg) at each frame
// duration, CBR and VBR, mono and stereo, and checks every packet's
// duration against FFmpeg's.
func TestOpusSamplesFFmpeg(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatal("ffmpeg not found: run make deps")
	}
	dir := t.TempDir()
	for _, fd := range []string{"2.5", "5", "10", "20", "40", "60", "120"} {
		for _, mode := range []string{"voip", "audio"} {
			for _, vbr := range []string{"on", "off"} {
				name := filepath.Join(dir, fd+mode+vbr+".ogg")
				out, err := exec.Command("ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:r=48000:d=0.5",
					"-f", "lavfi", "-i", "anoisesrc=r=48000:d=0.5:a=0.1", "-filter_complex", "amerge=inputs=2",
					"-c:a", "libopus", "-application", mode, "-vbr", vbr, "-frame_duration", fd, "-b:a", "48k", name).CombinedOutput()
				if err != nil {
					t.Fatalf("ffmpeg: %v: %s", err, out)
				}
				// The last packet's duration is cut to the end of the
				// stream (the Ogg granule position): it is left out.
				pkts := testenv.FFprobePackets(t, name)
				if len(pkts) < 2 {
					t.Fatalf("%s: %d packets", name, len(pkts))
				}
				for i, p := range pkts[:len(pkts)-1] {
					got, err := OpusSamples(p.Data)
					if err != nil || int64(got) != p.Duration {
						t.Errorf("%s packet %d (toc %#02x): %d samples, %v; want %d", filepath.Base(name), i, p.Data[0], got, err, p.Duration)
					}
				}
			}
		}
	}
}

// TestOpusSamplesInvalid: packets that break RFC 6716's framing rules are
// refused with the error that says why.
func TestOpusSamplesInvalid(t *testing.T) {
	big := make([]byte, 1+1276)
	for _, tc := range []struct {
		name string
		pkt  []byte
		want error
	}{
		{"empty", nil, ErrOpusEmpty},
		{"code 0 frame too large", big, ErrOpusTooLarge},
		{"code 1 odd length", []byte{0x01, 1, 2, 3}, ErrOpusFraming},
		{"code 2 no length", []byte{0x02}, ErrOpusFraming},
		{"code 2 length past the end", []byte{0x02, 10, 1, 2}, ErrOpusFraming},
		{"code 2 two-byte length cut", []byte{0x02, 252}, ErrOpusFraming},
		{"code 3 no count", []byte{0x03}, ErrOpusFraming},
		{"code 3 zero frames", []byte{0x03, 0x00}, ErrOpusFraming},
		{"code 3 over 120 ms", []byte{0x1b, 0x03}, ErrOpusTooLong}, // 3 × 60 ms
		{"code 3 cbr uneven", []byte{0xfb, 0x03, 1, 2}, ErrOpusFraming},
		{"code 3 padding cut", []byte{0xfb, 0x41}, ErrOpusFraming},
		{"code 3 padding past the end", []byte{0xfb, 0x41, 10, 1}, ErrOpusFraming},
		{"code 3 vbr lengths past the end", []byte{0xfb, 0x82, 50, 1, 2}, ErrOpusFraming},
		{"code 3 vbr lengths in the padding", []byte{0xfb, 0xc3, 2, 1, 1}, ErrOpusFraming},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n, err := OpusSamples(tc.pkt); !errors.Is(err, tc.want) {
				t.Fatalf("OpusSamples = %d, %v; want %v", n, err, tc.want)
			}
		})
	}
}

// FuzzOpusSamples: any bytes give a duration within the limits or an
// error, never a panic.
func FuzzOpusSamples(f *testing.F) {
	for _, p := range recordedOpus(f) {
		f.Add(p.data)
	}
	f.Add([]byte{0xfb, 0xc3, 2, 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := OpusSamples(b)
		if err == nil && (n <= 0 || n > OpusMaxSamples) {
			t.Fatalf("%d samples without an error", n)
		}
	})
}
