package transcode

import (
	"fmt"

	"github.com/vigia/vigia/media"
)

// aacRates are the sample rates AAC-LC signals directly (ISO 14496-3
// table 1.16), which libavcodec's encoder takes, in increasing order.
var aacRates = []int{7350, 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000}

// OpusAACRate is the rate Opus (decoded at 48 kHz) is encoded to AAC at:
// 16 kHz keeps the 8 kHz band of wideband speech, what cameras send, at a
// third of the encoding cost of 48 kHz.
const OpusAACRate = 16000

// maxInputRate and maxChannels bound what a track may announce.
const (
	maxInputRate = 192000
	maxChannels  = 8
)

// aacRate returns the AAC rate for an input of rate: the same when AAC
// has it, else the next one up from 8 kHz to 48 kHz.
func aacRate(rate int) int {
	for _, r := range aacRates {
		if r == rate {
			return r
		}
	}
	for _, r := range aacRates {
		if r > rate && r >= 8000 && r <= 48000 {
			return r
		}
	}
	return 48000
}

// Supported reports whether tracks of codec c can be transcoded (by a
// build with cgo).
func Supported(c media.Codec) bool {
	return c == media.G711U || c == media.G711A || c == media.Opus
}

// checkTrack validates what a transcoder needs of t and returns its
// input rate and channels.
func checkTrack(t *media.Track) (rate, channels int, err error) {
	if t == nil || !Supported(t.Codec) {
		codec := media.Codec("none")
		if t != nil {
			codec = t.Codec
		}
		return 0, 0, fmt.Errorf("%w: %s", ErrCodec, codec)
	}
	rate, channels = t.ClockRate, max(t.Channels, 1)
	if t.Codec == media.Opus {
		rate = 48000
	}
	if rate <= 0 || rate > maxInputRate || channels > maxChannels {
		return 0, 0, fmt.Errorf("%w: %s at %d Hz, %d channels", ErrCodec, t.Codec, t.ClockRate, channels)
	}
	return rate, channels, nil
}
