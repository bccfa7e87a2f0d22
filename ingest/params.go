package ingest

import (
	"bytes"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"
)

// H264Params remembers the newest SPS and PPS (from the SDP or in-band) and
// puts them in front of IDR access units that lack them, so that every
// consumer can start decoding at any keyframe.
//
// What it keeps, and the parameter sets in the units it returns, are
// copies of its own: a unit's memory may be reused once the unit has been
// handled (media.Buffer), and the decoding-time extractors and the
// segmenter remember the parameter sets they are given.
type H264Params struct{ SPS, PPS []byte }

// Apply records the parameter sets of au and returns au with the known
// ones in front when it is an IDR that lacks them, and with the recorded
// copies in place of in-band ones.
func (p *H264Params) Apply(au [][]byte) [][]byte {
	hasSPS, hasPPS, idr := false, false, false
	var out [][]byte
	for i, n := range au {
		if len(n) == 0 {
			continue
		}
		switch h264.NALUType(n[0] & 0x1f) {
		case h264.NALUTypeSPS:
			p.SPS, hasSPS = keep(p.SPS, n), true
			out = substitute(out, au, i, p.SPS)
		case h264.NALUTypePPS:
			p.PPS, hasPPS = keep(p.PPS, n), true
			out = substitute(out, au, i, p.PPS)
		case h264.NALUTypeIDR:
			idr = true
		}
	}
	if out != nil {
		au = out
	}
	if !idr || (hasSPS && hasPPS) || p.SPS == nil || p.PPS == nil {
		return au
	}
	out = make([][]byte, 0, len(au)+2)
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
// ones in front when it is an IRAP that lacks them, and with the recorded
// copies in place of in-band ones.
func (p *H265Params) Apply(au [][]byte) [][]byte {
	hasVPS, hasSPS, hasPPS, irap := false, false, false, false
	var out [][]byte
	for i, n := range au {
		if len(n) < 2 {
			continue
		}
		switch typ := h265.NALUType((n[0] >> 1) & 0b111111); {
		case typ == h265.NALUType_VPS_NUT:
			p.VPS, hasVPS = keep(p.VPS, n), true
			out = substitute(out, au, i, p.VPS)
		case typ == h265.NALUType_SPS_NUT:
			p.SPS, hasSPS = keep(p.SPS, n), true
			out = substitute(out, au, i, p.SPS)
		case typ == h265.NALUType_PPS_NUT:
			p.PPS, hasPPS = keep(p.PPS, n), true
			out = substitute(out, au, i, p.PPS)
		case typ >= h265.NALUType_BLA_W_LP && typ <= h265.NALUType_CRA_NUT:
			irap = true
		}
	}
	if out != nil {
		au = out
	}
	if !irap || (hasVPS && hasSPS && hasPPS) || p.VPS == nil || p.SPS == nil || p.PPS == nil {
		return au
	}
	out = make([][]byte, 0, len(au)+3)
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

// keep returns old when it holds n's bytes, else a copy of n.
func keep(old, n []byte) []byte {
	if bytes.Equal(old, n) {
		return old
	}
	return append([]byte(nil), n...)
}

// substitute returns au (copied once, into out) with its i-th NAL unit
// replaced by c.
func substitute(out, au [][]byte, i int, c []byte) [][]byte {
	if out == nil {
		out = append(make([][]byte, 0, len(au)+3), au...)
	}
	out[i] = c
	return out
}
