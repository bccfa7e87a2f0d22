package synth

import (
	"fmt"

	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph264"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph265"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtpmpeg4audio"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/media"
)

const (
	videoClockRate   = 90000
	videoPayloadType = 96
	audioPayloadType = 97
)

// rtpPayload is one pre-encoded RTP packet of an access unit: the payload and
// the marker bit. Sequence number, timestamp and SSRC are filled in per
// camera when the packet is sent, so one encoding serves every camera.
type rtpPayload struct {
	payload []byte
	marker  bool
}

func payloads(pkts []*rtp.Packet) []rtpPayload {
	out := make([]rtpPayload, len(pkts))
	for i, p := range pkts {
		out[i] = rtpPayload{payload: p.Payload, marker: p.Marker}
	}
	return out
}

// packetizeVideo encodes every access unit into RTP payloads once.
func packetizeVideo(vc *videoCodec, units []media.Unit) ([][]rtpPayload, error) {
	var encode func([][]byte) ([]*rtp.Packet, error)
	switch vc.name {
	case CodecH264:
		e := &rtph264.Encoder{PayloadType: videoPayloadType, PacketizationMode: 1}
		if err := e.Init(); err != nil {
			return nil, fmt.Errorf("init h264 rtp encoder: %w", err)
		}
		encode = e.Encode
	default:
		e := &rtph265.Encoder{PayloadType: videoPayloadType}
		if err := e.Init(); err != nil {
			return nil, fmt.Errorf("init h265 rtp encoder: %w", err)
		}
		encode = e.Encode
	}
	out := make([][]rtpPayload, len(units))
	for i, u := range units {
		pkts, err := encode(u.NALUs)
		if err != nil {
			return nil, fmt.Errorf("packetize unit %d: %w: %w", i, ErrBadClip, err)
		}
		out[i] = payloads(pkts)
	}
	return out, nil
}

// newAudioFormat returns the RTP format of a clip: AAC as RFC 3640
// (AAC-hbr, one frame per packet), G.711 with its static payload type,
// Opus as RFC 7587.
func newAudioFormat(a *AudioClip) format.Format {
	switch a.Codec {
	case media.G711U:
		return &format.G711{PayloadTyp: 0, MULaw: true, SampleRate: a.Rate, ChannelCount: 1}
	case media.G711A:
		return &format.G711{PayloadTyp: 8, SampleRate: a.Rate, ChannelCount: 1}
	case media.Opus:
		return &format.Opus{PayloadTyp: audioPayloadType, ChannelCount: 1}
	}
	return &format.MPEG4Audio{
		PayloadTyp:       audioPayloadType,
		ProfileLevelID:   1,
		Config:           a.Config,
		SizeLength:       13,
		IndexLength:      3,
		IndexDeltaLength: 3,
	}
}

// packetizeAudio encodes every unit of a clip into its own RTP packet once:
// an AAC frame with its RFC 3640 header, G.711 samples or an Opus packet
// as they are.
func packetizeAudio(a *AudioClip) ([][]rtpPayload, error) {
	out := make([][]rtpPayload, len(a.Units))
	if a.Codec != media.AAC {
		for i, u := range a.Units {
			out[i] = []rtpPayload{{payload: u.Payload, marker: i == 0}}
		}
		return out, nil
	}
	e := &rtpmpeg4audio.Encoder{
		PayloadType:      audioPayloadType,
		SizeLength:       13,
		IndexLength:      3,
		IndexDeltaLength: 3,
	}
	if err := e.Init(); err != nil {
		return nil, fmt.Errorf("init aac rtp encoder: %w", err)
	}
	for i, u := range a.Units {
		pkts, err := e.Encode([][]byte{u.Payload})
		if err != nil {
			return nil, fmt.Errorf("packetize aac frame %d: %w: %w", i, ErrBadClip, err)
		}
		out[i] = payloads(pkts)
	}
	return out, nil
}
