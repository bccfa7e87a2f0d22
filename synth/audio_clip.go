package synth

import (
	"fmt"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"

	"github.com/vigia/vigia/media"
)

// AudioClip is a parsed AAC fixture: raw AAC frames (no ADTS headers) and
// their configuration. An AudioClip returned by AudioFixture is shared:
// callers must not modify it.
type AudioClip struct {
	// Config is the AudioSpecificConfig of the frames.
	Config *mpeg4audio.AudioSpecificConfig

	// Units are the AAC frames, each of 1024 samples, with
	// PTS = DTS = index * 1024 / SampleRate and Track 0.
	Units []media.Unit

	packets [][]rtpPayload
}

// SampleRate returns the sample rate of the clip, which is also its RTP clock
// rate.
func (a *AudioClip) SampleRate() int { return a.Config.SampleRate }

// Track returns the media track describing the clip.
func (a *AudioClip) Track() media.Track {
	return media.Track{Codec: media.AAC, ClockRate: a.Config.SampleRate, AAC: a.Config}
}

// Duration returns the length of one loop of the clip.
func (a *AudioClip) Duration() time.Duration {
	return samplesDuration(int64(len(a.Units))*mpeg4audio.SamplesPerAccessUnit, a.Config.SampleRate)
}

func samplesDuration(samples int64, rate int) time.Duration {
	return time.Duration(samples * int64(time.Second) / int64(rate))
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
	a := &AudioClip{
		Config: &mpeg4audio.AudioSpecificConfig{
			Type:          first.Type,
			SampleRate:    first.SampleRate,
			ChannelConfig: first.ChannelConfig,
		},
		Units: make([]media.Unit, len(pkts)),
	}
	for i, p := range pkts {
		if p.SampleRate != first.SampleRate || p.ChannelConfig != first.ChannelConfig {
			return nil, fmt.Errorf("frame %d changes the configuration: %w", i, ErrBadClip)
		}
		pts := samplesDuration(int64(i)*mpeg4audio.SamplesPerAccessUnit, first.SampleRate)
		a.Units[i] = media.Unit{PTS: pts, DTS: pts, Payload: p.AU}
	}
	var err error
	a.packets, err = packetizeAudio(a.Units)
	if err != nil {
		return nil, err
	}
	return a, nil
}
