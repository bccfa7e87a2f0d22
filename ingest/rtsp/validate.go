package rtsp

import (
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"
)

// Access units are checked before they reach the pipeline, so that a camera
// sending garbage (valid RTP headers, random payloads) produces decode
// errors instead of segments of undecodable frames. The checks are the
// cheap syntax rules every real stream follows: the NALU header (forbidden
// bit, defined types, nal_ref_idc or layer rules), parameter sets that
// parse, and the first fields of slice headers.

// validH264 reports whether au can be a real H.264 access unit.
func validH264(au [][]byte) bool {
	ok, slices, _ := checkH264(au)
	return ok && slices > 0
}

// paramsH264 reports whether au holds only valid parameter sets (and SEI
// or delimiters): no picture, nothing wrong.
func paramsH264(au [][]byte) bool {
	ok, slices, params := checkH264(au)
	return ok && slices == 0 && params > 0
}

// checkH264 applies the syntax rules to every NAL unit of au and counts
// its slices and parameter sets.
func checkH264(au [][]byte) (ok bool, slices, params int) {
	for _, n := range au {
		if len(n) == 0 || n[0]&0x80 != 0 {
			return false, 0, 0
		}
		ref := n[0] >> 5 & 0x03
		switch typ := h264.NALUType(n[0] & 0x1f); typ {
		case h264.NALUTypeNonIDR, h264.NALUTypeIDR:
			if typ == h264.NALUTypeIDR && ref == 0 {
				return false, 0, 0
			}
			if !validSliceHeader(n[1:], typ == h264.NALUTypeIDR) {
				return false, 0, 0
			}
			slices++
		case h264.NALUTypeDataPartitionA, h264.NALUTypeDataPartitionB, h264.NALUTypeDataPartitionC:
			slices++
		case h264.NALUTypeSPS:
			var sps h264.SPS
			if ref == 0 || sps.Unmarshal(n) != nil {
				return false, 0, 0
			}
			params++
		case h264.NALUTypePPS:
			if ref == 0 || len(n) < 2 {
				return false, 0, 0
			}
			params++
		case h264.NALUTypeSEI, h264.NALUTypeAccessUnitDelimiter, h264.NALUTypeEndOfSequence,
			h264.NALUTypeEndOfStream, h264.NALUTypeFillerData:
			if ref != 0 {
				return false, 0, 0
			}
		case h264.NALUTypeSPSExtension, h264.NALUTypePrefix, h264.NALUTypeSubsetSPS,
			h264.NALUTypeSliceLayerWithoutPartitioning, h264.NALUTypeSliceExtension, h264.NALUTypeSliceExtensionDepth:
		default:
			return false, 0, 0 // unspecified, reserved or packetization types
		}
	}
	return true, slices, params
}

// validSliceHeader checks first_mb_in_slice, slice_type (an I or SI slice
// in an IDR picture) and pic_parameter_set_id.
func validSliceHeader(b []byte, idr bool) bool {
	if len(b) > 16 {
		b = b[:16]
	}
	b = h264.EmulationPreventionRemove(b)
	r := bitReader{b: b}
	if _, ok := r.ue(); !ok { // first_mb_in_slice
		return false
	}
	st, ok := r.ue()
	if !ok || st > 9 || (idr && st%5 != 2 && st%5 != 4) {
		return false
	}
	pps, ok := r.ue()
	return ok && pps <= 255
}

// validH265 reports whether au can be a real H.265 access unit of the base
// layer.
func validH265(au [][]byte) bool {
	ok, slices, _ := checkH265(au)
	return ok && slices > 0
}

// paramsH265 is paramsH264 for H.265.
func paramsH265(au [][]byte) bool {
	ok, slices, params := checkH265(au)
	return ok && slices == 0 && params > 0
}

// checkH265 is checkH264 for H.265.
func checkH265(au [][]byte) (ok bool, slices, params int) {
	for _, n := range au {
		if len(n) < 3 || n[0]&0x80 != 0 {
			return false, 0, 0
		}
		layer := (n[0]&0x01)<<5 | n[1]>>3
		tid := n[1] & 0x07
		if layer != 0 || tid == 0 {
			return false, 0, 0
		}
		switch typ := h265.NALUType((n[0] >> 1) & 0x3f); {
		case typ <= h265.NALUType_RASL_R || (typ >= h265.NALUType_BLA_W_LP && typ <= h265.NALUType_CRA_NUT):
			if typ >= h265.NALUType_BLA_W_LP && tid != 1 {
				return false, 0, 0 // IRAP pictures have TemporalId 0
			}
			slices++
		case typ == h265.NALUType_VPS_NUT || typ == h265.NALUType_PPS_NUT:
			if tid != 1 {
				return false, 0, 0
			}
			params++
		case typ == h265.NALUType_SPS_NUT:
			var sps h265.SPS
			if tid != 1 || sps.Unmarshal(n) != nil {
				return false, 0, 0
			}
			params++
		case typ >= h265.NALUType_AUD_NUT && typ <= h265.NALUType_SUFFIX_SEI_NUT:
		default:
			return false, 0, 0 // reserved, unspecified or packetization types
		}
	}
	return true, slices, params
}

// bitReader reads Exp-Golomb codes.
type bitReader struct {
	b   []byte
	pos int
}

func (r *bitReader) bit() (uint32, bool) {
	if r.pos >= len(r.b)*8 {
		return 0, false
	}
	v := uint32(r.b[r.pos/8]>>(7-r.pos%8)) & 1
	r.pos++
	return v, true
}

// ue reads an unsigned Exp-Golomb code of at most 31 leading zeros.
func (r *bitReader) ue() (uint32, bool) {
	zeros := 0
	for {
		b, ok := r.bit()
		if !ok {
			return 0, false
		}
		if b == 1 {
			break
		}
		zeros++
		if zeros > 31 {
			return 0, false
		}
	}
	var v uint32
	for range zeros {
		b, ok := r.bit()
		if !ok {
			return 0, false
		}
		v = v<<1 | b
	}
	return (1<<zeros - 1) + v, true
}
