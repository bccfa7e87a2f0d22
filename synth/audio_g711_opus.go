package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigia/vigia/audio"
	"github.com/vigia/vigia/media"
)

// g711Clip makes 4 s of G.711 at 8 kHz mono in 20 ms units: the sound of
// the AAC fixture (a 440 Hz tone with a 1760 Hz beep at the start of each
// second) over quiet noise, as a camera's microphone picks up a room.
func g711Clip(ulaw bool) (*AudioClip, error) {
	const rate, per, seconds = 8000, 160, 4
	rng := rand.New(rand.NewPCG(7, 11))
	pcm := make([]int16, rate*seconds)
	for i := range pcm {
		t := float64(i) / rate
		freq := 440.0
		if math.Mod(t, 1) < 0.125 {
			freq = 1760
		}
		v := 0.12*math.Sin(2*math.Pi*freq*t) + 0.003*rng.NormFloat64()
		pcm[i] = int16(max(-1, min(1, v)) * 32767)
	}
	b := audio.EncodeG711(nil, pcm, ulaw)
	units := make([][]byte, 0, len(b)/per)
	for i := 0; i+per <= len(b); i += per {
		units = append(units, b[i:i+per:i+per])
	}
	codec := media.G711A
	if ulaw {
		codec = media.G711U
	}
	return newAudioClip(codec, rate, per, units)
}

// parseOpusClip parses an Ogg Opus stream of 20 ms packets (the header
// packets first).
func parseOpusClip(data []byte) (*AudioClip, error) {
	pkts, err := oggPackets(data)
	if err != nil {
		return nil, err
	}
	if len(pkts) < 3 || string(pkts[0][:min(8, len(pkts[0]))]) != "OpusHead" {
		return nil, fmt.Errorf("not an ogg opus stream: %w", ErrBadClip)
	}
	pkts = pkts[2:] // OpusHead, OpusTags
	for i, p := range pkts {
		if n, err := audio.OpusSamples(p); err != nil || n != 960 {
			return nil, fmt.Errorf("opus packet %d: %d samples, %v: %w", i, n, err, ErrBadClip)
		}
	}
	return newAudioClip(media.Opus, 48000, 960, pkts)
}

// oggPackets returns the packets of an Ogg stream of one logical
// bitstream (RFC 3533): pages of segments, a packet ending at the first
// segment shorter than 255 bytes.
func oggPackets(data []byte) ([][]byte, error) {
	var pkts [][]byte
	var cur []byte
	for len(data) > 0 {
		if len(data) < 27 || string(data[:4]) != "OggS" {
			return nil, fmt.Errorf("ogg page header: %w", ErrBadClip)
		}
		n := int(data[26])
		if len(data) < 27+n {
			return nil, fmt.Errorf("ogg segment table cut short: %w", ErrBadClip)
		}
		table, body := data[27:27+n], data[27+n:]
		size := 0
		for _, l := range table {
			size += int(l)
		}
		if len(body) < size {
			return nil, fmt.Errorf("ogg page cut short: %w", ErrBadClip)
		}
		for _, l := range table {
			cur = append(cur, body[:l]...)
			body = body[l:]
			if l < 255 {
				pkts = append(pkts, cur)
				cur = nil
			}
		}
		data = data[27+n+size:]
	}
	if cur != nil {
		return nil, fmt.Errorf("ogg stream ends inside a packet: %w", ErrBadClip)
	}
	return pkts, nil
}
