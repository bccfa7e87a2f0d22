package ingest

import (
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"
)

// H264Params remembers the newest SPS and PPS (from the SDP or in-band) and
// puts them in front of IDR access units that lack them, so that every
// consumer can start decoding at any keyframe.
type H264Params struct{ SPS, PPS []byte }

// Apply records the parameter sets of au and returns au with the known
// ones in front when it is an IDR that lacks them.
func (p *H264Params) Apply(au [][]byte) [][]byte {
	hasSPS, hasPPS, idr := false, false, false
	for _, n := range au {
		if len(n) == 0 {
			continue
		}
		switch h264.NALUType(n[0] & 0x1f) {
		case h264.NALUTypeSPS:
			p.SPS, hasSPS = append([]byte(nil), n...), true
		case h264.NALUTypePPS:
			p.PPS, hasPPS = append([]byte(nil), n...), true
		case h264.NALUTypeIDR:
			idr = true
		}
	}
	if !idr || (hasSPS && hasPPS) || p.SPS == nil || p.PPS == nil {
		return au
	}
	out := make([][]byte, 0, len(au)+2)
	if !hasSPS {
		out = append(out, p.SPS)
	}
	if !hasPPS {
		out = append(out, p.PPS)
	}
	return append(out, au...)
}

// H265Params does for H.265 what H264Params does for H.264, with the VPS.
type H265Params struct{ VPS, SPS, PPS []byte }

// Apply records the parameter sets of au and returns au with the known
// ones in front when it is an IRAP that lacks them.
func (p *H265Params) Apply(au [][]byte) [][]byte {
	hasVPS, hasSPS, hasPPS, irap := false, false, false, false
	for _, n := range au {
		if len(n) < 2 {
			continue
		}
		switch typ := h265.NALUType((n[0] >> 1) & 0b111111); {
		case typ == h265.NALUType_VPS_NUT:
			p.VPS, hasVPS = append([]byte(nil), n...), true
		case typ == h265.NALUType_SPS_NUT:
			p.SPS, hasSPS = append([]byte(nil), n...), true
		case typ == h265.NALUType_PPS_NUT:
			p.PPS, hasPPS = append([]byte(nil), n...), true
		case typ >= h265.NALUType_BLA_W_LP && typ <= h265.NALUType_CRA_NUT:
			irap = true
		}
	}
	if !irap || (hasVPS && hasSPS && hasPPS) || p.VPS == nil || p.SPS == nil || p.PPS == nil {
		return au
	}
	out := make([][]byte, 0, len(au)+3)
	if !hasVPS {
		out = append(out, p.VPS)
	}
	if !hasSPS {
		out = append(out, p.SPS)
	}
	if !hasPPS {
		out = append(out, p.PPS)
	}
	return append(out, au...)
}
