package rtmp

import (
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"
)

// (Same as ingest/rtsp; FLV sends parameter sets in the sequence header only.)
//
// h264Params remembers the newest SPS and PPS (from the SDP or in-band) and
// puts them in front of IDR access units that lack them, so that every
// consumer can start decoding at any keyframe.
type h264Params struct{ sps, pps []byte }

func (p *h264Params) apply(au [][]byte) [][]byte {
	hasSPS, hasPPS, idr := false, false, false
	for _, n := range au {
		if len(n) == 0 {
			continue
		}
		switch h264.NALUType(n[0] & 0x1f) {
		case h264.NALUTypeSPS:
			p.sps, hasSPS = append([]byte(nil), n...), true
		case h264.NALUTypePPS:
			p.pps, hasPPS = append([]byte(nil), n...), true
		case h264.NALUTypeIDR:
			idr = true
		}
	}
	if !idr || (hasSPS && hasPPS) || p.sps == nil || p.pps == nil {
		return au
	}
	out := make([][]byte, 0, len(au)+2)
	if !hasSPS {
		out = append(out, p.sps)
	}
	if !hasPPS {
		out = append(out, p.pps)
	}
	return append(out, au...)
}

// h265Params does for H.265 what h264Params does for H.264, with the VPS.
type h265Params struct{ vps, sps, pps []byte }

func (p *h265Params) apply(au [][]byte) [][]byte {
	hasVPS, hasSPS, hasPPS, irap := false, false, false, false
	for _, n := range au {
		if len(n) < 2 {
			continue
		}
		switch typ := h265.NALUType((n[0] >> 1) & 0b111111); {
		case typ == h265.NALUType_VPS_NUT:
			p.vps, hasVPS = append([]byte(nil), n...), true
		case typ == h265.NALUType_SPS_NUT:
			p.sps, hasSPS = append([]byte(nil), n...), true
		case typ == h265.NALUType_PPS_NUT:
			p.pps, hasPPS = append([]byte(nil), n...), true
		case typ >= h265.NALUType_BLA_W_LP && typ <= h265.NALUType_CRA_NUT:
			irap = true
		}
	}
	if !irap || (hasVPS && hasSPS && hasPPS) || p.vps == nil || p.sps == nil || p.pps == nil {
		return au
	}
	out := make([][]byte, 0, len(au)+3)
	if !hasVPS {
		out = append(out, p.vps)
	}
	if !hasSPS {
		out = append(out, p.sps)
	}
	if !hasPPS {
		out = append(out, p.pps)
	}
	return append(out, au...)
}
