package rtsp

import (
	"encoding/binary"
	"errors"

	"github.com/pion/rtp"
)

// Errors of RTP parsing, reported as decode errors.
var (
	errRTPShort   = errors.New("rtp packet too short")
	errRTPVersion = errors.New("rtp version is not 2")
	errRTPPadding = errors.New("rtp padding larger than the packet")

	// errPayloadTypeOther is reported for a packet of a format other
	// than the one read in its media.
	errPayloadTypeOther = errors.New("rtp payload type of another format")
)

// rtpPacket is the part of an RTP packet the depacketizers use. Its payload
// points into the buffer it was parsed from: valid until that buffer is
// read into again.
type rtpPacket struct {
	marker  bool
	pt      uint8
	seq     uint16
	ts      uint32
	ssrc    uint32
	payload []byte
}

// parseRTP reads an RTP packet's fixed header, CSRC list, header extension
// and padding without copying or allocating (RFC 3550 5.1).
func parseRTP(b []byte) (rtpPacket, error) {
	if len(b) < 12 {
		return rtpPacket{}, errRTPShort
	}
	if b[0]>>6 != 2 {
		return rtpPacket{}, errRTPVersion
	}
	p := rtpPacket{
		marker: b[1]&0x80 != 0,
		pt:     b[1] & 0x7f,
		seq:    binary.BigEndian.Uint16(b[2:]),
		ts:     binary.BigEndian.Uint32(b[4:]),
		ssrc:   binary.BigEndian.Uint32(b[8:]),
	}
	n := 12 + 4*int(b[0]&0x0f)
	if len(b) < n {
		return rtpPacket{}, errRTPShort
	}
	if b[0]&0x10 != 0 {
		if len(b) < n+4 {
			return rtpPacket{}, errRTPShort
		}
		n += 4 + 4*int(binary.BigEndian.Uint16(b[n+2:]))
		if len(b) < n {
			return rtpPacket{}, errRTPShort
		}
	}
	end := len(b)
	if b[0]&0x20 != 0 {
		pad := int(b[end-1])
		if pad == 0 || end-pad < n {
			return rtpPacket{}, errRTPPadding
		}
		end -= pad
	}
	p.payload = b[n:end]
	return p, nil
}

// fromPion converts a packet read by gortsplib (UDP sessions).
func fromPion(pkt *rtp.Packet) rtpPacket {
	return rtpPacket{
		marker:  pkt.Marker,
		pt:      pkt.PayloadType,
		seq:     pkt.SequenceNumber,
		ts:      pkt.Timestamp,
		ssrc:    pkt.SSRC,
		payload: pkt.Payload,
	}
}
