package wire

import (
	"encoding/binary"
	"fmt"
)

// maxNALUs caps the NAL units of one access unit or one configuration.
const maxNALUs = 256

// DecoderConfig is what Vigia needs of an AVC or HEVC decoder
// configuration record.
type DecoderConfig struct {
	// LengthSize is the size of the NAL unit length prefixes (1, 2 or 4).
	LengthSize int

	// VPS (HEVC only), SPS and PPS NAL units.
	VPS, SPS, PPS [][]byte
}

type byteReader struct{ b []byte }

func (r *byteReader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.b) {
		return nil, fmt.Errorf("%w: record wants %d bytes, %d left", ErrFLV, n, len(r.b))
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p, nil
}

func (r *byteReader) nalus(count int) ([][]byte, error) {
	var out [][]byte
	for i := 0; i < count; i++ {
		l, err := r.take(2)
		if err != nil {
			return nil, err
		}
		n, err := r.take(int(binary.BigEndian.Uint16(l)))
		if err != nil {
			return nil, err
		}
		if len(n) > 0 {
			out = append(out, append([]byte(nil), n...))
		}
	}
	return out, nil
}

// ParseAVCConfig parses an AVCDecoderConfigurationRecord.
func ParseAVCConfig(b []byte) (DecoderConfig, error) {
	r := &byteReader{b: b}
	h, err := r.take(6)
	if err != nil {
		return DecoderConfig{}, err
	}
	if h[0] != 1 {
		return DecoderConfig{}, fmt.Errorf("%w: avcC version %d", ErrFLV, h[0])
	}
	c := DecoderConfig{LengthSize: int(h[4]&3) + 1}
	if c.LengthSize == 3 {
		return c, fmt.Errorf("%w: nal length size 3", ErrFLV)
	}
	if c.SPS, err = r.nalus(int(h[5] & 0x1f)); err != nil {
		return c, err
	}
	n, err := r.take(1)
	if err != nil {
		return c, err
	}
	if c.PPS, err = r.nalus(int(n[0])); err != nil {
		return c, err
	}
	if len(c.SPS) == 0 || len(c.PPS) == 0 {
		return c, fmt.Errorf("%w: avcC without sps or pps", ErrFLV)
	}
	return c, nil
}

// MarshalAVCConfig builds an AVCDecoderConfigurationRecord with 4-byte
// length prefixes.
func MarshalAVCConfig(sps, pps []byte) []byte {
	var p1, p2, p3 byte
	if len(sps) >= 4 {
		p1, p2, p3 = sps[1], sps[2], sps[3]
	}
	b := []byte{1, p1, p2, p3, 0xff, 0xe1}
	b = binary.BigEndian.AppendUint16(b, uint16(len(sps)))
	b = append(b, sps...)
	b = append(b, 1)
	b = binary.BigEndian.AppendUint16(b, uint16(len(pps)))
	return append(b, pps...)
}

// HEVC NAL unit types of parameter sets.
const (
	hevcVPS = 32
	hevcSPS = 33
	hevcPPS = 34
)

// ParseHEVCConfig parses an HEVCDecoderConfigurationRecord.
func ParseHEVCConfig(b []byte) (DecoderConfig, error) {
	r := &byteReader{b: b}
	h, err := r.take(23)
	if err != nil {
		return DecoderConfig{}, err
	}
	if h[0] != 1 {
		return DecoderConfig{}, fmt.Errorf("%w: hvcC version %d", ErrFLV, h[0])
	}
	c := DecoderConfig{LengthSize: int(h[21]&3) + 1}
	if c.LengthSize == 3 {
		return c, fmt.Errorf("%w: nal length size 3", ErrFLV)
	}
	for i := 0; i < int(h[22]); i++ {
		a, err := r.take(3)
		if err != nil {
			return c, err
		}
		nalus, err := r.nalus(int(binary.BigEndian.Uint16(a[1:])))
		if err != nil {
			return c, err
		}
		switch a[0] & 0x3f {
		case hevcVPS:
			c.VPS = append(c.VPS, nalus...)
		case hevcSPS:
			c.SPS = append(c.SPS, nalus...)
		case hevcPPS:
			c.PPS = append(c.PPS, nalus...)
		}
	}
	if len(c.VPS) == 0 || len(c.SPS) == 0 || len(c.PPS) == 0 {
		return c, fmt.Errorf("%w: hvcC without vps, sps or pps", ErrFLV)
	}
	return c, nil
}

// MarshalHEVCConfig builds an HEVCDecoderConfigurationRecord with 4-byte
// length prefixes; the profile fields are copied from the SPS.
func MarshalHEVCConfig(vps, sps, pps []byte) []byte {
	b := make([]byte, 23)
	b[0] = 1
	if len(sps) >= 15 {
		copy(b[1:13], sps[3:15]) // general profile_tier_level
	}
	b[13], b[14] = 0xf0, 0x00 // min_spatial_segmentation_idc
	b[15] = 0xfc              // parallelismType
	b[16] = 0xfd              // chroma_format_idc 4:2:0
	b[17], b[18] = 0xf8, 0xf8 // bit depths 8
	b[21] = 0x0f              // lengthSizeMinusOne 3
	b[22] = 3
	for _, p := range []struct {
		typ  byte
		nalu []byte
	}{{hevcVPS, vps}, {hevcSPS, sps}, {hevcPPS, pps}} {
		b = append(b, 0x80|p.typ, 0, 1)
		b = binary.BigEndian.AppendUint16(b, uint16(len(p.nalu)))
		b = append(b, p.nalu...)
	}
	return b
}

// SplitNALUs splits length-prefixed NAL units.
func SplitNALUs(b []byte, lengthSize int) ([][]byte, error) {
	if lengthSize != 1 && lengthSize != 2 && lengthSize != 4 {
		return nil, fmt.Errorf("%w: nal length size %d", ErrFLV, lengthSize)
	}
	var out [][]byte
	for len(b) > 0 {
		if len(b) < lengthSize {
			return nil, fmt.Errorf("%w: truncated nal length", ErrFLV)
		}
		var n uint64
		for _, x := range b[:lengthSize] {
			n = n<<8 | uint64(x)
		}
		b = b[lengthSize:]
		if n > uint64(len(b)) {
			return nil, fmt.Errorf("%w: nal unit of %d bytes in %d", ErrFLV, n, len(b))
		}
		if n > 0 {
			if len(out) == maxNALUs {
				return nil, fmt.Errorf("%w: more than %d nal units", ErrFLV, maxNALUs)
			}
			out = append(out, b[:n])
		}
		b = b[n:]
	}
	return out, nil
}

// JoinNALUs writes NAL units with 4-byte length prefixes.
func JoinNALUs(nalus [][]byte) []byte {
	n := 0
	for _, x := range nalus {
		n += 4 + len(x)
	}
	b := make([]byte, 0, n)
	for _, x := range nalus {
		b = binary.BigEndian.AppendUint32(b, uint32(len(x)))
		b = append(b, x...)
	}
	return b
}
