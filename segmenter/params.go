package segmenter

import (
	"bytes"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/vigia/vigia/media"
)

// paramSets holds the parameter sets of a video track.
type paramSets struct {
	vps, sps, pps []byte
}

func (p paramSets) complete(c media.Codec) bool {
	if c == media.H265 {
		return p.vps != nil && p.sps != nil && p.pps != nil
	}
	return p.sps != nil && p.pps != nil
}

func (p paramSets) equal(o paramSets) bool {
	return bytes.Equal(p.vps, o.vps) && bytes.Equal(p.sps, o.sps) && bytes.Equal(p.pps, o.pps)
}

// update returns p with the parameter sets found in nalus. The result
// points into nalus (unit memory): clone it before keeping it.
func (p paramSets) update(c media.Codec, nalus [][]byte) paramSets {
	for _, n := range nalus {
		if len(n) == 0 {
			continue
		}
		if c == media.H265 {
			if len(n) < 2 {
				continue
			}
			switch h265.NALUType((n[0] >> 1) & 0b111111) {
			case h265.NALUType_VPS_NUT:
				p.vps = n
			case h265.NALUType_SPS_NUT:
				p.sps = n
			case h265.NALUType_PPS_NUT:
				p.pps = n
			}
			continue
		}
		switch h264.NALUType(n[0] & 0x1f) {
		case h264.NALUTypeSPS:
			p.sps = n
		case h264.NALUTypePPS:
			p.pps = n
		}
	}
	return p
}

// dimensions parses the SPS and returns the picture size; zero when the SPS
// does not parse.
func (p paramSets) dimensions(c media.Codec) (width, height int) {
	defer func() {
		if recover() != nil {
			width, height = 0, 0
		}
	}()
	if c == media.H265 {
		var s h265.SPS
		if err := s.Unmarshal(p.sps); err != nil {
			return 0, 0
		}
		return s.Width(), s.Height()
	}
	var s h264.SPS
	if err := s.Unmarshal(p.sps); err != nil {
		return 0, 0
	}
	return s.Width(), s.Height()
}

// clone copies the parameter sets so they do not alias unit buffers.
func (p paramSets) clone() paramSets {
	return paramSets{
		vps: bytes.Clone(p.vps),
		sps: bytes.Clone(p.sps),
		pps: bytes.Clone(p.pps),
	}
}
