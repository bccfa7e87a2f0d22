package synth

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/format"

	"github.com/vigia/vigia/audio"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

// TestServeAudioCodecs: a camera with G.711 or Opus audio announces it in
// the SDP (static payload types for G.711) and sends the clip's units in
// order, one per packet, timestamps one unit apart.
func TestServeAudioCodecs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		codec string
		check func(format.Format) bool
	}{
		{AudioPCMU, func(f format.Format) bool {
			g, ok := f.(*format.G711)
			return ok && g.MULaw && g.PayloadTyp == 0 && g.SampleRate == 8000 && g.ChannelCount == 1
		}},
		{AudioPCMA, func(f format.Format) bool {
			g, ok := f.(*format.G711)
			return ok && !g.MULaw && g.PayloadTyp == 8 && g.SampleRate == 8000
		}},
		{AudioOpus, func(f format.Format) bool {
			o, ok := f.(*format.Opus)
			return ok && o.ChannelCount == 1
		}},
	}
	var specs []CameraSpec
	for _, tc := range cases {
		specs = append(specs, CameraSpec{Path: tc.codec, AudioCodec: tc.codec})
	}
	s := startServer(t, specs...)
	for _, tc := range cases {
		t.Run(tc.codec, func(t *testing.T) {
			t.Parallel()
			clip, err := AudioClipFor(tc.codec)
			if err != nil {
				t.Fatal(err)
			}
			r, err := dialReader(s.URL(tc.codec), "", "", false)
			if err != nil {
				t.Fatal(err)
			}
			defer r.close()
			if r.audioMedia == nil || !tc.check(r.audioMedia.Formats[0]) {
				t.Fatalf("SDP audio %+v", r.audioMedia)
			}
			testenv.WaitFor(t, 10*time.Second, "40 audio packets", func() bool { return len(r.audioPackets()) >= 40 })
			pkts := r.audioPackets()
			first := -1
			for i, u := range clip.Units {
				if bytes.Equal(u.Payload, pkts[0].payload) {
					first = i
					break
				}
			}
			if first < 0 {
				t.Fatal("first packet is no unit of the clip")
			}
			for i, p := range pkts {
				if !bytes.Equal(p.payload, clip.Units[(first+i)%len(clip.Units)].Payload) {
					t.Fatalf("packet %d is not the clip's next unit", i)
				}
				if i > 0 && p.ts-pkts[i-1].ts != uint32(clip.UnitSamples) {
					t.Fatalf("packet %d: timestamp %d after the previous, want %d", i, p.ts-pkts[i-1].ts, clip.UnitSamples)
				}
			}
		})
	}
}

// TestAudioClips: the G.711 clips are 4 s of 20 ms units that decode to
// the beeping tone; the Opus fixture is 4 s of 20 ms packets; the AAC one
// keeps its configuration; an unknown codec is refused.
func TestAudioClips(t *testing.T) {
	for _, tc := range []struct {
		codec      string
		want       media.Codec
		rate, unit int
	}{
		{AudioAAC, media.AAC, 16000, 1024},
		{AudioPCMU, media.G711U, 8000, 160},
		{AudioPCMA, media.G711A, 8000, 160},
		{AudioOpus, media.Opus, 48000, 960},
	} {
		t.Run(tc.codec, func(t *testing.T) {
			a, err := AudioClipFor(tc.codec)
			if err != nil {
				t.Fatal(err)
			}
			tr := a.Track()
			if a.Codec != tc.want || a.Rate != tc.rate || a.UnitSamples != tc.unit || tr.Codec != tc.want || tr.ClockRate != tc.rate {
				t.Fatalf("clip %s at %d Hz, %d samples a unit; track %+v", a.Codec, a.Rate, a.UnitSamples, tr)
			}
			if d := a.Duration(); d < 3900*time.Millisecond || d > 4100*time.Millisecond {
				t.Fatalf("clip lasts %v", d)
			}
			if len(a.packets) != len(a.Units) || a.Units[1].PTS != samplesDuration(int64(tc.unit), tc.rate) {
				t.Fatalf("%d packet lists for %d units; unit 1 at %v", len(a.packets), len(a.Units), a.Units[1].PTS)
			}
			if tc.want == media.G711U || tc.want == media.G711A {
				var pcm []int16
				for _, u := range a.Units[:50] { // the first second
					pcm = audio.DecodeG711(pcm, u.Payload, tc.want == media.G711U)
				}
				// 440 Hz after the 125 ms beep at 1760 Hz.
				crossings := 0
				for i := 2000; i < len(pcm); i++ {
					if (pcm[i-1] < 0) != (pcm[i] < 0) {
						crossings++
					}
				}
				if f := float64(crossings) / 2 / (float64(len(pcm)-2000) / 8000); f < 430 || f > 450 {
					t.Fatalf("decoded tone at %.0f Hz, want 440", f)
				}
			}
		})
	}
	if _, err := AudioClipFor("g726"); !errors.Is(err, ErrUnknownCodec) {
		t.Fatalf("AudioClipFor(g726) = %v, want ErrUnknownCodec", err)
	}
	if err := (CameraSpec{Path: "x", AudioCodec: "mp3"}).validate(); !errors.Is(err, ErrUnknownCodec) {
		t.Fatalf("spec with audio mp3: %v, want ErrUnknownCodec", err)
	}
}

// FuzzOggPackets: any bytes give packets that lie within the input, or an
// error; never a panic.
func FuzzOggPackets(f *testing.F) {
	good, err := fixtureFS.ReadFile("fixtures/opus_48k_mono.ogg")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good[:600])
	f.Add([]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pkts, err := oggPackets(data)
		if err != nil {
			return
		}
		n := 0
		for _, p := range pkts {
			n += len(p)
		}
		if n > len(data) {
			t.Fatalf("%d bytes of packets from %d bytes", n, len(data))
		}
		if _, err := parseOpusClip(data); err == nil && len(pkts) < 3 {
			t.Fatal("opus clip accepted without its header packets")
		}
	})
}
