//go:build cgo

package transcode

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/vigia/vigia/audio"
	"github.com/vigia/vigia/media"
)

// TestToOpus: 1 s of silence then 2 s of a 1 kHz tone, 16 kHz µ-law made
// AAC-LC, come out of a ToOpus as Opus packets of 20 ms, back to back,
// whose sound decoded (by libavcodec, through the Opus to AAC Transcoder,
// and FFmpeg) is the tone, of the same loudness and pitch, starting where
// it started on the input's clock.
func TestToOpus(t *testing.T) {
	const rate = 16000
	src := make([]int16, 3*rate)
	copy(src[rate:], tone(2*rate, rate, 1000, 0.25))
	g711 := audio.EncodeG711(nil, src, true)
	aacTC, aacFrames := run(t, &media.Track{Codec: media.G711U, ClockRate: rate, Channels: 1}, g711Units(g711, 320, rate, 1))

	o, err := NewToOpus(aacTC.Track())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	var pkts []OpusPacket
	for _, f := range aacFrames {
		if err := o.Unit(f, func(p OpusPacket) { pkts = append(pkts, p) }); err != nil {
			t.Fatal(err)
		}
	}
	if want := 3 * 50; len(pkts) < want-2 || len(pkts) > want+10 {
		t.Fatalf("%d Opus packets for 3 s, want about %d", len(pkts), want)
	}
	if first := pkts[0].PTS - aacFrames[0].PTS; first > 0 || first < -5*time.Millisecond {
		t.Errorf("first packet at %v of the first AAC frame: want the encoder's lookahead before it", first)
	}
	for i, p := range pkts {
		if i > 0 && p.PTS-pkts[i-1].PTS != 20*time.Millisecond {
			t.Fatalf("packet %d at %v, the one before at %v: want 20 ms apart", i, p.PTS, pkts[i-1].PTS)
		}
		if n, err := audio.OpusSamples(p.Payload); err != nil || n != 960 {
			t.Fatalf("packet %d: %d samples, %v", i, n, err)
		}
	}
	if s := o.Stats(); s.Frames != int64(len(pkts)) || s.CPU <= 0 || s.Audio < 3*time.Second {
		t.Errorf("stats %+v", s)
	}

	// Decode: Opus to AAC (16 kHz), then FFmpeg.
	var units []*media.Unit
	for _, p := range pkts {
		units = append(units, &media.Unit{Track: 1, PTS: p.PTS, DTS: p.PTS, Payload: p.Payload})
	}
	back, frames := run(t, &media.Track{Codec: media.Opus, ClockRate: 48000, Channels: 1}, units)
	pcm := decodeAAC(t, back.Track(), frames)
	start := frames[0].PTS
	mid := pcm[int((1500*time.Millisecond-start)*rate/time.Second):][:rate/2]
	if f := frequency(mid, rate); math.Abs(f-1000) > 3 {
		t.Errorf("decoded tone at %.1f Hz, sent 1000 Hz", f)
	}
	if got, want := rmsDB(mid), 20*math.Log10(0.25/math.Sqrt2); math.Abs(got-want) > 1.5 {
		t.Errorf("loudness %.1f dBFS, sent %.1f dBFS", got, want)
	}
	onset := -1
	for i, v := range pcm {
		if v > 2000 || v < -2000 {
			onset = i
			break
		}
	}
	at := start + time.Duration(onset)*time.Second/rate
	if d := at - time.Second; onset < 0 || d < -5*time.Millisecond || d > 5*time.Millisecond {
		t.Errorf("tone decoded from %v, sent from 1 s", at)
	}
}

// TestToOpusGap: AAC frames after a gap in the input are placed at their
// time, not right after the samples before them.
func TestToOpusGap(t *testing.T) {
	const rate = 16000
	g711 := audio.EncodeG711(nil, tone(2*rate, rate, 440, 0.25), true)
	aacTC, aacFrames := run(t, &media.Track{Codec: media.G711U, ClockRate: rate, Channels: 1}, g711Units(g711, 320, rate, 1))
	o, err := NewToOpus(aacTC.Track())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.Close)
	var pkts []OpusPacket
	for i, f := range aacFrames {
		if i >= 10 {
			f.PTS += 3 * time.Second // the camera's audio went silent 3 s
		}
		if err := o.Unit(f, func(p OpusPacket) { pkts = append(pkts, p) }); err != nil {
			t.Fatal(err)
		}
	}
	jumps := 0
	for i := 1; i < len(pkts); i++ {
		if d := pkts[i].PTS - pkts[i-1].PTS; d != 20*time.Millisecond {
			jumps++
			if d < 3*time.Second-40*time.Millisecond || d > 3*time.Second+40*time.Millisecond {
				t.Errorf("packet %d follows the one before by %v, want 3 s more than 20 ms", i, d)
			}
		}
	}
	if jumps != 1 {
		t.Errorf("%d jumps in the packets' times, want 1", jumps)
	}
}

// TestToOpusRefuses: a track that is not AAC with its configuration is
// refused with ErrCodec.
func TestToOpusRefuses(t *testing.T) {
	for _, tr := range []*media.Track{nil, {Codec: media.G711U, ClockRate: 8000}, {Codec: media.AAC}} {
		if _, err := NewToOpus(tr); !errors.Is(err, ErrCodec) {
			t.Errorf("%+v: %v, want ErrCodec", tr, err)
		}
	}
}
