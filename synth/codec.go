package synth

import (
	"fmt"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/vigia/vigia/media"
)

// Codec names accepted in CameraSpec.Codec and Fixture.
const (
	CodecH264 = "h264"
	CodecH265 = "h265"
)

// videoCodec holds what the clip loader needs to know about a video codec.
type videoCodec struct {
	name     string
	media    media.Codec
	naluType func(nalu []byte) int
	isKey    func(typ int) bool
	aud      int
	filler   int
	vps      int // -1 when the codec has no VPS
	sps      int
	pps      int
	size     func(sps []byte) (width, height int, fps float64, err error)
}

var h264Codec = &videoCodec{
	name:     CodecH264,
	media:    media.H264,
	naluType: func(n []byte) int { return int(h264.NALUType(n[0] & 0x1f)) },
	isKey:    func(t int) bool { return t == int(h264.NALUTypeIDR) },
	aud:      int(h264.NALUTypeAccessUnitDelimiter),
	filler:   int(h264.NALUTypeFillerData),
	vps:      -1,
	sps:      int(h264.NALUTypeSPS),
	pps:      int(h264.NALUTypePPS),
	size: func(b []byte) (int, int, float64, error) {
		var sps h264.SPS
		if err := sps.Unmarshal(b); err != nil {
			return 0, 0, 0, err
		}
		return sps.Width(), sps.Height(), sps.FPS(), nil
	},
}

var h265Codec = &videoCodec{
	name:     CodecH265,
	media:    media.H265,
	naluType: func(n []byte) int { return int(h265.NALUType((n[0] >> 1) & 0x3f)) },
	isKey: func(t int) bool {
		return t >= int(h265.NALUType_BLA_W_LP) && t <= int(h265.NALUType_CRA_NUT)
	},
	aud:    int(h265.NALUType_AUD_NUT),
	filler: int(h265.NALUType_FD_NUT),
	vps:    int(h265.NALUType_VPS_NUT),
	sps:    int(h265.NALUType_SPS_NUT),
	pps:    int(h265.NALUType_PPS_NUT),
	size: func(b []byte) (int, int, float64, error) {
		var sps h265.SPS
		if err := sps.Unmarshal(b); err != nil {
			return 0, 0, 0, err
		}
		return sps.Width(), sps.Height(), sps.FPS(), nil
	},
}

func codecByName(name string) (*videoCodec, error) {
	switch name {
	case CodecH264:
		return h264Codec, nil
	case CodecH265:
		return h265Codec, nil
	}
	return nil, fmt.Errorf("codec %q: %w", name, ErrUnknownCodec)
}
