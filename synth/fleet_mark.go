package synth

import "encoding/binary"

// The fleet marks every video frame with its index on the camera's
// timeline, in an SEI message (user data unregistered, RFC 6184 / ITU-T
// H.264 D.1.6, H.265 D.2.6) sent as its own NAL unit before the frame's
// slices. Recorders store it with the frame, so that the frames a recorder
// stored can be counted and their gaps found in its files (FrameMark),
// whatever its timestamps say.

// markUUID identifies the fleet's SEI message. Neither it nor the encoded
// index holds a zero byte, so the NAL unit needs no emulation prevention.
var markUUID = [16]byte{'v', 'i', 'g', 'i', 'a', '-', 'f', 'l', 'e', 'e', 't', '-', 'm', 'a', 'r', 'k'}

const (
	markIndexBytes = 8                   // 7 bits each, high bit set
	markPayload    = 16 + markIndexBytes // UUID and index
	seiUserData    = 5                   // payload type: user data unregistered
	markSEISize    = 2 + markPayload + 1 // payload type, size, payload, trailing bits
	maxMarkNALSize = 2 + markSEISize     // with the H.265 NAL header
	h264SEIType    = 6                   // nal_unit_type of an H.264 SEI
	h265PrefixSEI  = 39                  // nal_unit_type of an H.265 prefix SEI
	maxMarkIndex   = 1<<(7*markIndexBytes) - 1
)

// appendMark appends the SEI NAL unit marking frame index idx of a camera
// of codec.
func appendMark(b []byte, codec string, idx uint64) []byte {
	if codec == CodecH265 {
		b = append(b, h265PrefixSEI<<1, 1)
	} else {
		b = append(b, h264SEIType)
	}
	b = append(b, seiUserData, markPayload)
	b = append(b, markUUID[:]...)
	idx &= maxMarkIndex
	for i := markIndexBytes - 1; i >= 0; i-- {
		b = append(b, 0x80|byte(idx>>(7*i)&0x7f))
	}
	return append(b, 0x80) // rbsp_trailing_bits
}

// FrameMark returns the frame index carried by a NAL unit, when it is the
// SEI message a fleet camera puts before each frame (H.264 or H.265).
func FrameMark(nalu []byte) (uint64, bool) {
	var b []byte
	switch {
	case len(nalu) >= 1 && nalu[0]&0x9f == h264SEIType: // forbidden bit 0, nal_ref_idc 0
		b = nalu[1:]
	case len(nalu) >= 2 && nalu[0]&0x81 == 0 && nalu[0]>>1 == h265PrefixSEI:
		b = nalu[2:]
	default:
		return 0, false
	}
	if len(b) < markSEISize || b[0] != seiUserData || b[1] != markPayload || [16]byte(b[2:18]) != markUUID {
		return 0, false
	}
	var idx uint64
	for _, c := range b[18 : 18+markIndexBytes] {
		if c&0x80 == 0 {
			return 0, false
		}
		idx = idx<<7 | uint64(c&0x7f)
	}
	return idx, true
}

// FrameMarkAVCC returns the frame index of a video sample stored as
// length-prefixed NAL units (AVCC, as in MP4 files), from the fleet's SEI
// message among its NAL units.
func FrameMarkAVCC(sample []byte) (uint64, bool) {
	for len(sample) >= 4 {
		n := binary.BigEndian.Uint32(sample)
		sample = sample[4:]
		if uint64(n) > uint64(len(sample)) {
			return 0, false
		}
		if idx, ok := FrameMark(sample[:n]); ok {
			return idx, true
		}
		sample = sample[n:]
	}
	return 0, false
}
