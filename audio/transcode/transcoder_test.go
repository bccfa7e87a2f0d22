//go:build cgo

package transcode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"

	"github.com/vigia/vigia/audio"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

// tone returns n samples of a sine of freq Hz at rate, of amplitude amp
// (of full scale).
func tone(n, rate int, freq, amp float64) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = int16(amp * 32767 * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
	}
	return s
}

// g711Units cuts G.711 bytes into units of per samples, timed from 0.
func g711Units(b []byte, per, rate, channels int) []*media.Unit {
	var out []*media.Unit
	for i := 0; i*per*channels < len(b); i++ {
		end := min((i+1)*per*channels, len(b))
		pts := time.Duration(i*per) * time.Second / time.Duration(rate)
		out = append(out, &media.Unit{Track: 1, PTS: pts, DTS: pts, Payload: b[i*per*channels : end]})
	}
	return out
}

// run transcodes units (and flushes) and returns the AAC frames.
func run(t *testing.T, track *media.Track, units []*media.Unit) (*Transcoder, []*media.Unit) {
	t.Helper()
	tc, err := New(track)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tc.Close)
	var out []*media.Unit
	emit := func(u *media.Unit) { out = append(out, u) }
	for _, u := range units {
		if err := tc.Unit(u, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := tc.Flush(1, emit); err != nil {
		t.Fatal(err)
	}
	return tc, out
}

// decodeAAC writes frames as ADTS, checks that FFmpeg decodes them without
// a word, and returns the decoded samples (mono, at the track's rate).
func decodeAAC(t *testing.T, track *media.Track, frames []*media.Unit) []int16 {
	t.Helper()
	var pkts mpeg4audio.ADTSPackets
	for _, f := range frames {
		pkts = append(pkts, &mpeg4audio.ADTSPacket{Type: track.AAC.Type, SampleRate: track.AAC.SampleRate,
			ChannelConfig: track.AAC.ChannelConfig, AU: f.Payload})
	}
	b, err := pkts.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "out.aac")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("ffmpeg", "-v", "error", "-i", p, "-f", "s16le", "-ac", "1", "-")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("ffmpeg decoding the AAC: %v: %s", err, stderr.String())
	}
	pcm := make([]int16, stdout.Len()/2)
	if err := binary.Read(&stdout, binary.LittleEndian, pcm); err != nil {
		t.Fatal(err)
	}
	return pcm
}

// rmsDB is the loudness of s in dB of full scale.
func rmsDB(s []int16) float64 {
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return 10 * math.Log10(sum/float64(len(s))/(32768*32768))
}

// frequency estimates the frequency of a tone from its zero crossings.
func frequency(s []int16, rate int) float64 {
	n := 0
	for i := 1; i < len(s); i++ {
		if (s[i-1] < 0) != (s[i] < 0) {
			n++
		}
	}
	return float64(n) / 2 / (float64(len(s)) / float64(rate))
}

// checkFrames: frames are 1024 samples apart, the first at -1024 samples
// (the encoder's priming), each with a payload.
func checkFrames(t *testing.T, frames []*media.Unit, rate int) {
	t.Helper()
	step := time.Duration(1024) * time.Second / time.Duration(rate)
	for i, f := range frames {
		want := time.Duration(i-1) * step
		if d := f.PTS - want; d < -time.Microsecond || d > time.Microsecond || f.DTS != f.PTS {
			t.Fatalf("frame %d at %v (dts %v), want %v", i, f.PTS, f.DTS, want)
		}
		if len(f.Payload) == 0 || f.Track != 1 {
			t.Fatalf("frame %d: %d bytes, track %d", i, len(f.Payload), f.Track)
		}
	}
}

// TestTranscodeG711: 10 s of a 440 Hz tone in µ-law and A-law, 8 kHz mono
// in 20 ms packets, come out as AAC-LC 8 kHz mono that FFmpeg decodes to
// the same length, loudness (within 1 dB) and pitch.
func TestTranscodeG711(t *testing.T) {
	const rate, secs = 8000, 10
	src := tone(rate*secs, rate, 440, 0.25)
	for _, tc := range []struct {
		name  string
		codec media.Codec
	}{{"pcmu", media.G711U}, {"pcma", media.G711A}} {
		t.Run(tc.name, func(t *testing.T) {
			b := audio.EncodeG711(nil, src, tc.codec == media.G711U)
			tr, frames := run(t, &media.Track{Codec: tc.codec, ClockRate: rate}, g711Units(b, 160, rate, 1))
			out := tr.Track()
			if out.Codec != media.AAC || out.ClockRate != rate || out.AAC.Type != mpeg4audio.ObjectTypeAACLC ||
				out.AAC.SampleRate != rate || out.AAC.ChannelConfig != 1 {
				t.Fatalf("output track %+v %+v", out, out.AAC)
			}
			checkFrames(t, frames, rate)
			pcm := decodeAAC(t, out, frames)
			// The first frame decodes to the encoder's priming.
			pcm = pcm[min(1024, len(pcm)):]
			if d := len(pcm) - len(src); d < -1024 || d > 1024 {
				t.Errorf("%d samples decoded, %d sent", len(pcm), len(src))
			}
			if in, got := rmsDB(src), rmsDB(pcm[:min(len(pcm), len(src))]); math.Abs(in-got) > 1 {
				t.Errorf("loudness %.1f dBFS, sent %.1f dBFS", got, in)
			}
			if f := frequency(pcm[rate:len(src)-rate], rate); math.Abs(f-440) > 2 {
				t.Errorf("decoded tone at %.1f Hz, sent 440 Hz", f)
			}
			st := tr.Stats()
			if st.Frames != int64(len(frames)) || st.Audio != secs*time.Second || st.CPU <= 0 {
				t.Errorf("stats %+v for %d frames", st, len(frames))
			}
		})
	}
}

// TestTranscodeG711StereoAndRates: stereo G.711 is mixed down to mono;
// rates AAC signals are kept, others resampled to the next one up.
func TestTranscodeG711StereoAndRates(t *testing.T) {
	for _, tc := range []struct {
		name          string
		rate, ch, aac int
	}{
		{"8k stereo", 8000, 2, 8000},
		{"16k mono", 16000, 1, 16000},
		{"9k6 mono resampled", 9600, 1, 11025},
		{"44k1 mono", 44100, 1, 44100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mono := tone(tc.rate*3, tc.rate, 440, 0.25)
			src := make([]int16, 0, len(mono)*tc.ch)
			for _, v := range mono {
				for range tc.ch {
					src = append(src, v)
				}
			}
			b := audio.EncodeG711(nil, src, true)
			tr, frames := run(t, &media.Track{Codec: media.G711U, ClockRate: tc.rate, Channels: tc.ch},
				g711Units(b, tc.rate/50, tc.rate, tc.ch))
			if tr.Track().ClockRate != tc.aac || tr.Track().AAC.ChannelConfig != 1 {
				t.Fatalf("output %d Hz, %d channels; want %d Hz mono", tr.Track().ClockRate, tr.Track().AAC.ChannelConfig, tc.aac)
			}
			checkFrames(t, frames, tc.aac)
			pcm := decodeAAC(t, tr.Track(), frames)[1024:]
			if want := 3 * tc.aac; len(pcm) < want-2048 || len(pcm) > want+2048 {
				t.Errorf("%d samples decoded, want about %d", len(pcm), want)
			}
			// The middle second: the end decodes to a fade and noise.
			mid := pcm[tc.aac : 2*tc.aac]
			if f := frequency(mid, tc.aac); math.Abs(f-440) > 2 {
				t.Errorf("decoded tone at %.1f Hz, sent 440 Hz", f)
			}
			if got := rmsDB(mid); math.Abs(got-rmsDB(mono)) > 1 {
				t.Errorf("loudness %.1f dBFS, sent %.1f dBFS", got, rmsDB(mono))
			}
		})
	}
}

// TestTranscodeRefuses: codecs other than G.711 and Opus, and parameters
// out of range, are refused with ErrCodec.
func TestTranscodeRefuses(t *testing.T) {
	for _, tr := range []*media.Track{
		nil,
		{Codec: media.AAC, ClockRate: 16000},
		{Codec: "G726", ClockRate: 8000},
		{Codec: media.G711U, ClockRate: 0},
		{Codec: media.G711U, ClockRate: 8000, Channels: 9},
		{Codec: media.G711A, ClockRate: 1 << 20},
	} {
		if _, err := New(tr); !errors.Is(err, ErrCodec) {
			t.Errorf("New(%+v) = %v, want ErrCodec", tr, err)
		}
	}
}

// opusUnits encodes a tone of secs seconds with libopus (through FFmpeg)
// in 20 ms packets, channels channels, and returns the packets timed from
// 0 at 48 kHz.
func opusUnits(t *testing.T, secs float64, channels int) []*media.Unit {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tone.ogg")
	out, err := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i",
		"sine=f=440:r=48000:d="+strconv.FormatFloat(secs, 'f', -1, 64)+",volume=-12dB",
		"-ac", strconv.Itoa(channels), "-c:a", "libopus", "-b:a", "32k", "-frame_duration", "20", p).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	var units []*media.Unit
	at := int64(0)
	for _, pk := range testenv.FFprobePackets(t, p) {
		pts := time.Duration(at) * time.Second / 48000
		units = append(units, &media.Unit{Track: 1, PTS: pts, DTS: pts, Payload: pk.Data})
		n, err := audio.OpusSamples(pk.Data)
		if err != nil {
			t.Fatal(err)
		}
		at += int64(n)
	}
	return units
}

// TestTranscodeOpus: an Opus tone, mono and stereo, comes out as AAC-LC at
// 16 kHz mono of the same loudness and pitch.
func TestTranscodeOpus(t *testing.T) {
	for _, ch := range []int{1, 2} {
		t.Run(strconv.Itoa(ch)+" channels", func(t *testing.T) {
			units := opusUnits(t, 3, ch)
			tr, frames := run(t, &media.Track{Codec: media.Opus, ClockRate: 48000, Channels: ch}, units)
			if tr.Track().ClockRate != OpusAACRate || tr.Track().AAC.ChannelConfig != 1 {
				t.Fatalf("output %+v", tr.Track().AAC)
			}
			checkFrames(t, frames, OpusAACRate)
			pcm := decodeAAC(t, tr.Track(), frames)
			if want := 3 * OpusAACRate; len(pcm) < want || len(pcm) > want+3*1024 {
				t.Errorf("%d samples decoded, want about %d", len(pcm), want)
			}
			mid := pcm[OpusAACRate : 2*OpusAACRate]
			if f := frequency(mid, OpusAACRate); math.Abs(f-440) > 2 {
				t.Errorf("decoded tone at %.1f Hz, sent 440 Hz", f)
			}
			// FFmpeg's sine is of amplitude 1/8: at -12 dB, -33.1 dBFS RMS;
			// made stereo, each channel 3 dB lower (FFmpeg's mix of a
			// centre channel), and so the mono mix of both.
			want := -33.1 - 3*float64(ch-1)
			if got := rmsDB(mid); math.Abs(got-want) > 1 {
				t.Errorf("loudness %.1f dBFS, sent %.1f dBFS", got, want)
			}
		})
	}
}

// TestTranscodeOpusBadPacket: a packet that breaks Opus framing is refused
// with ErrDecode and the Transcoder goes on.
func TestTranscodeOpusBadPacket(t *testing.T) {
	units := opusUnits(t, 1, 1)
	tc, err := New(&media.Track{Codec: media.Opus, ClockRate: 48000})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	n := 0
	emit := func(*media.Unit) { n++ }
	for i, u := range units {
		if i == 10 {
			if err := tc.Unit(&media.Unit{Track: 1, PTS: u.PTS, Payload: []byte{0x03, 0x00}}, emit); !errors.Is(err, ErrDecode) {
				t.Fatalf("bad packet: %v, want ErrDecode", err)
			}
			if err := tc.Unit(&media.Unit{Track: 1, PTS: u.PTS}, emit); !errors.Is(err, ErrDecode) {
				t.Fatalf("empty packet: %v, want ErrDecode", err)
			}
		}
		if err := tc.Unit(u, emit); err != nil {
			t.Fatal(err)
		}
	}
	if n < 14 {
		t.Fatalf("%d AAC frames for 1 s at 16 kHz", n)
	}
}
