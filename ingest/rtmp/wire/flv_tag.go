package wire

import (
	"fmt"
)

// VideoCodec is a video codec carried in FLV.
type VideoCodec uint8

// Video codecs Vigia records.
const (
	VideoH264 VideoCodec = 1
	VideoH265 VideoCodec = 2
)

// Legacy FLV video codec ids: 7 is AVC, 12 the widespread (non-Adobe)
// id for HEVC.
const (
	legacyAVC  = 7
	legacyHEVC = 12
)

// Enhanced RTMP FourCCs.
var (
	fourCCAVC  = [4]byte{'a', 'v', 'c', '1'}
	fourCCHEVC = [4]byte{'h', 'v', 'c', '1'}
)

// PacketKind is what a tag carries.
type PacketKind uint8

// Packet kinds.
const (
	// KindOther is a tag Vigia skips (metadata, command frames).
	KindOther PacketKind = iota
	// KindConfig carries the decoder configuration record (AVC/HEVC) or
	// the AudioSpecificConfig (AAC).
	KindConfig
	// KindFrames carries coded data.
	KindFrames
	// KindEnd ends the sequence.
	KindEnd
)

// VideoTag is the body of an FLV video tag (an RTMP video message).
type VideoTag struct {
	// Codec of the data.
	Codec VideoCodec

	// Enhanced is true for an Enhanced RTMP header (FourCC).
	Enhanced bool

	// Key is true for a keyframe.
	Key bool

	// Kind of packet.
	Kind PacketKind

	// CTS is the composition time offset in milliseconds (PTS − DTS).
	CTS int32

	// Data is the decoder configuration record for KindConfig, the
	// length-prefixed NAL units for KindFrames.
	Data []byte
}

func si24(b []byte) int32 {
	v := int32(b[0])<<16 | int32(b[1])<<8 | int32(b[2])
	if v&0x800000 != 0 {
		v -= 1 << 24
	}
	return v
}

// ParseVideoTag parses a video tag body. Codecs other than H.264 and
// H.265 give ErrUnsupported; malformed tags ErrFLV.
func ParseVideoTag(b []byte) (VideoTag, error) {
	if len(b) < 1 {
		return VideoTag{}, fmt.Errorf("%w: empty video tag", ErrFLV)
	}
	if b[0]&0x80 != 0 {
		return parseEnhanced(b)
	}
	frameType := b[0] >> 4
	t := VideoTag{Key: frameType == 1}
	switch b[0] & 0x0f {
	case legacyAVC:
		t.Codec = VideoH264
	case legacyHEVC:
		t.Codec = VideoH265
	default:
		return t, fmt.Errorf("%w: flv video codec id %d", ErrUnsupported, b[0]&0x0f)
	}
	if frameType == 5 { // video info / command frame
		return t, nil
	}
	if len(b) < 5 {
		return t, fmt.Errorf("%w: video tag of %d bytes", ErrFLV, len(b))
	}
	switch b[1] {
	case 0:
		t.Kind = KindConfig
	case 1:
		t.Kind = KindFrames
	case 2:
		t.Kind = KindEnd
	default:
		return t, fmt.Errorf("%w: avc packet type %d", ErrFLV, b[1])
	}
	t.CTS = si24(b[2:5])
	t.Data = b[5:]
	return t, nil
}

func parseEnhanced(b []byte) (VideoTag, error) {
	frameType := (b[0] >> 4) & 0x07
	packetType := b[0] & 0x0f
	t := VideoTag{Enhanced: true, Key: frameType == 1}
	if len(b) < 5 {
		return t, fmt.Errorf("%w: enhanced video tag of %d bytes", ErrFLV, len(b))
	}
	switch [4]byte(b[1:5]) {
	case fourCCAVC:
		t.Codec = VideoH264
	case fourCCHEVC:
		t.Codec = VideoH265
	default:
		return t, fmt.Errorf("%w: fourcc %q", ErrUnsupported, b[1:5])
	}
	if frameType == 5 {
		return t, nil
	}
	body := b[5:]
	switch packetType {
	case 0:
		t.Kind = KindConfig
	case 1:
		if len(body) < 3 {
			return t, fmt.Errorf("%w: coded frames without composition time", ErrFLV)
		}
		t.Kind = KindFrames
		t.CTS = si24(body)
		body = body[3:]
	case 2:
		t.Kind = KindEnd
	case 3:
		t.Kind = KindFrames
	case 4:
		t.Kind = KindOther
	default:
		// multitrack, ModEx and MPEG-TS sequence start are not used by
		// cameras
		return t, fmt.Errorf("%w: enhanced packet type %d", ErrUnsupported, packetType)
	}
	t.Data = body
	return t, nil
}

// Marshal returns the tag body: an Enhanced RTMP header when t.Enhanced,
// otherwise the legacy header with codec id 7 (H.264) or 12 (H.265).
func (t VideoTag) Marshal() []byte {
	frameType := byte(2)
	if t.Key {
		frameType = 1
	}
	if t.Enhanced {
		var pt byte
		switch t.Kind {
		case KindConfig:
			pt = 0
		case KindFrames:
			pt = 1
		case KindEnd:
			pt = 2
		}
		fcc := fourCCAVC
		if t.Codec == VideoH265 {
			fcc = fourCCHEVC
		}
		b := append([]byte{0x80 | frameType<<4 | pt}, fcc[:]...)
		if t.Kind == KindFrames {
			b = append(b, byte(t.CTS>>16), byte(t.CTS>>8), byte(t.CTS))
		}
		return append(b, t.Data...)
	}
	id := byte(legacyAVC)
	if t.Codec == VideoH265 {
		id = legacyHEVC
	}
	var pt byte
	switch t.Kind {
	case KindConfig:
		pt = 0
	case KindFrames:
		pt = 1
	case KindEnd:
		pt = 2
	}
	b := []byte{frameType<<4 | id, pt, byte(t.CTS >> 16), byte(t.CTS >> 8), byte(t.CTS)}
	return append(b, t.Data...)
}

// SoundAAC is the FLV sound format of AAC.
const SoundAAC = 10

// AudioTag is the body of an FLV audio tag.
type AudioTag struct {
	// Format is the FLV sound format (10 is AAC).
	Format uint8

	// Kind is KindConfig for the AudioSpecificConfig, KindFrames for a raw
	// AAC frame; KindOther for formats other than AAC.
	Kind PacketKind

	// Data of the packet.
	Data []byte
}

// ParseAudioTag parses an audio tag body.
func ParseAudioTag(b []byte) (AudioTag, error) {
	if len(b) < 1 {
		return AudioTag{}, fmt.Errorf("%w: empty audio tag", ErrFLV)
	}
	t := AudioTag{Format: b[0] >> 4}
	if t.Format != SoundAAC {
		t.Data = b[1:]
		return t, nil
	}
	if len(b) < 2 {
		return t, fmt.Errorf("%w: aac tag of %d bytes", ErrFLV, len(b))
	}
	switch b[1] {
	case 0:
		t.Kind = KindConfig
	case 1:
		t.Kind = KindFrames
	default:
		return t, fmt.Errorf("%w: aac packet type %d", ErrFLV, b[1])
	}
	t.Data = b[2:]
	return t, nil
}

// Marshal returns the body of an AAC audio tag (44 kHz, 16 bit, stereo
// flags, as FLV requires for AAC whatever the real format).
func (t AudioTag) Marshal() []byte {
	pt := byte(1)
	if t.Kind == KindConfig {
		pt = 0
	}
	return append([]byte{SoundAAC<<4 | 0x0f, pt}, t.Data...)
}
