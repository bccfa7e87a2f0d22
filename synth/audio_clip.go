package synth

import (
	"fmt"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"

	"github.com/vigia/vigia/media"
)

// Audio codecs accepted in CameraSpec.AudioCodec and AudioClipFor.
const (
	AudioAAC  = "aac"  // AAC-LC, 16 kHz mono, one frame per RTP packet (RFC 3640)
	AudioPCMU = "pcmu" // G.711 µ-law, 8 kHz mono, 20 ms per packet
	AudioPCMA = "pcma" // G.711 A-law, 8 kHz mono, 20 ms per packet
	AudioOpus = "opus" // Opus, 48 kHz mono, 20 ms per packet (RFC 7587)
)

// AudioClip is a parsed audio fixture: its units (AAC frames without ADTS
// headers, G.711 samples or Opus packets), all of the same duration, and
// what describes them. An AudioClip returned by AudioFixture or
// AudioClipFor is shared: callers must not modify it.
type AudioClip struct {
	// Codec of the units.
	Codec media.Codec

	// Config is the AudioSpecificConfig of an AAC clip, nil otherwise.
	Config *mpeg4audio.AudioSpecificConfig

	// Rate is the RTP clock rate (the sample rate; 48000 for Opus).
	Rate int

	// UnitSamples is the duration of every unit, in samples at Rate.
	UnitSamples int

	// Units are the clip's units, with PTS = DTS = index * UnitSamples /
	// Rate and Track 0.
	Units []media.Unit

	packets [][]rtpPayload
}

// SampleRate returns the RTP clock rate of the clip.
func (a *AudioClip) SampleRate() int { return a.Rate }

// Track returns the media track describing the clip.
func (a *AudioClip) Track() media.Track {
	t := media.Track{Codec: a.Codec, ClockRate: a.Rate, AAC: a.Config}
	if a.Codec != media.AAC {
		t.Channels = 1
	}
	return t
}

// Duration returns the length of one loop of the clip.
func (a *AudioClip) Duration() time.Duration {
	return samplesDuration(int64(len(a.Units))*int64(a.UnitSamples), a.Rate)
}

func samplesDuration(samples int64, rate int) time.Duration {
	return time.Duration(samples * int64(time.Second) / int64(rate))
}

// newAudioClip times units of per samples at rate and packetizes them.
func newAudioClip(codec media.Codec, rate, per int, payloads [][]byte) (*AudioClip, error) {
	a := &AudioClip{Codec: codec, Rate: rate, UnitSamples: per, Units: make([]media.Unit, len(payloads))}
	for i, p := range payloads {
		pts := samplesDuration(int64(i)*int64(per), rate)
		a.Units[i] = media.Unit{PTS: pts, DTS: pts, Payload: p}
	}
	var err error
	if a.packets, err = packetizeAudio(a); err != nil {
		return nil, err
	}
	return a, nil
}

// parseAudioClip parses an ADTS stream.
func parseAudioClip(data []byte) (*AudioClip, error) {
	var pkts mpeg4audio.ADTSPackets
	if err := pkts.Unmarshal(data); err != nil {
		return nil, fmt.Errorf("parse adts: %w: %w", ErrBadClip, err)
	}
	if len(pkts) == 0 {
		return nil, fmt.Errorf("no adts frames: %w", ErrBadClip)
	}
	first := pkts[0]
	aus := make([][]byte, len(pkts))
	for i, p := range pkts {
		if p.SampleRate != first.SampleRate || p.ChannelConfig != first.ChannelConfig {
			return nil, fmt.Errorf("frame %d changes the configuration: %w", i, ErrBadClip)
		}
		aus[i] = p.AU
	}
	a, err := newAudioClip(media.AAC, first.SampleRate, mpeg4audio.SamplesPerAccessUnit, aus)
	if err != nil {
		return nil, err
	}
	a.Config = &mpeg4audio.AudioSpecificConfig{
		Type:          first.Type,
		SampleRate:    first.SampleRate,
		ChannelConfig: first.ChannelConfig,
	}
	return a, nil
}
