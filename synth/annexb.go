package synth

import "bytes"

var startCode = []byte{0, 0, 1}

// splitNALUs splits an Annex-B byte stream into NAL units, without start
// codes. Bytes before the first start code and trailing zero bytes of each
// NAL unit (the leading zero of 4-byte start codes, trailing_zero_8bits) are
// dropped, as are empty NAL units.
func splitNALUs(buf []byte) [][]byte {
	var out [][]byte
	i := bytes.Index(buf, startCode)
	if i < 0 {
		return nil
	}
	start := i + len(startCode)
	for {
		j := bytes.Index(buf[start:], startCode)
		end := len(buf)
		if j >= 0 {
			end = start + j
		}
		if n := trimTrailingZeros(buf[start:end]); len(n) > 0 {
			out = append(out, n)
		}
		if j < 0 {
			return out
		}
		start = end + len(startCode)
	}
}

func trimTrailingZeros(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// splitAccessUnits groups NAL units into access units: a new access unit
// starts at each access unit delimiter. Delimiters and filler data are
// dropped; empty access units are skipped.
func splitAccessUnits(nalus [][]byte, vc *videoCodec) [][][]byte {
	var aus [][][]byte
	var cur [][]byte
	for _, n := range nalus {
		t := vc.naluType(n)
		switch {
		case t == vc.aud:
			if len(cur) > 0 {
				aus = append(aus, cur)
			}
			cur = nil
		case t == vc.filler:
		default:
			cur = append(cur, n)
		}
	}
	if len(cur) > 0 {
		aus = append(aus, cur)
	}
	return aus
}
