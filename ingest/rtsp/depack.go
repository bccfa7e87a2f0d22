package rtsp

import (
	"encoding/binary"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/vigia/vigia/media"
)

// A depacketizer turns the RTP packets of a video track into access units
// (RFC 6184 for H.264, RFC 7798 for H.265). A unit ends at the marker bit
// or at the first packet of the next timestamp.
type depacketizer interface {
	push(p *rtpPacket)

	// lost says that packets before the next one are missing: the unit
	// being assembled, if any, is dropped.
	lost()
}

// h264Depacketizer handles single NAL unit packets, STAP-A and FU-A
// (packetization modes 0 and 1).
type h264Depacketizer struct{ au auAssembler }

func newH264Depacketizer(emit func([][]byte, uint32, *media.Buffer), fail func(error)) *h264Depacketizer {
	return &h264Depacketizer{au: auAssembler{
		maxSize: h264.MaxAccessUnitSize, maxNALUs: h264.MaxNALUsPerAccessUnit,
		emit: emit, fail: fail,
	}}
}

func (d *h264Depacketizer) lost() { d.au.lostPackets() }

func h264KeyType(hdr byte) bool {
	switch h264.NALUType(hdr & 0x1f) {
	case h264.NALUTypeIDR, h264.NALUTypeSPS, h264.NALUTypePPS:
		return true
	}
	return false
}

func (d *h264Depacketizer) push(p *rtpPacket) {
	a := &d.au
	a.packet(p.ts)
	b := p.payload
	if len(b) < 1 {
		a.drop(errPayloadShort)
	} else {
		switch typ := h264.NALUType(b[0] & 0x1f); typ {
		case h264.NALUTypeFUA:
			if len(b) < 2 {
				a.drop(errPayloadShort)
				break
			}
			start, end := b[1]&0x80 != 0, b[1]&0x40 != 0
			if start {
				hdr := b[0]&0xe0 | b[1]&0x1f
				if h264KeyType(hdr) {
					a.markKey()
				}
				a.fragStart(p.seq, []byte{hdr}, b[2:], end)
			} else {
				a.fragMore(p.seq, b[2:], end)
			}
		case h264.NALUTypeSTAPA:
			// Zero bytes after the last unit are padding (RFC 6184 5.7.1).
			a.aggregate(b[1:], 1, true, func(n []byte) bool { return h264KeyType(n[0]) })
		case h264.NALUTypeSTAPB, h264.NALUTypeMTAP16, h264.NALUTypeMTAP24, h264.NALUTypeFUB:
			a.drop(errPacketType)
		default:
			if h264KeyType(b[0]) {
				a.markKey()
			}
			a.whole(b)
		}
	}
	if p.marker {
		a.finish()
	}
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// h265Depacketizer handles single NAL unit packets, aggregation packets and
// fragmentation units, without decoding order numbers.
type h265Depacketizer struct{ au auAssembler }

func newH265Depacketizer(emit func([][]byte, uint32, *media.Buffer), fail func(error)) *h265Depacketizer {
	return &h265Depacketizer{au: auAssembler{
		maxSize: h265.MaxAccessUnitSize, maxNALUs: h265.MaxNALUsPerAccessUnit,
		emit: emit, fail: fail,
	}}
}

func (d *h265Depacketizer) lost() { d.au.lostPackets() }

func h265KeyType(typ h265.NALUType) bool {
	return (typ >= h265.NALUType_BLA_W_LP && typ <= h265.NALUType_CRA_NUT) ||
		typ == h265.NALUType_VPS_NUT || typ == h265.NALUType_SPS_NUT || typ == h265.NALUType_PPS_NUT
}

func (d *h265Depacketizer) push(p *rtpPacket) {
	a := &d.au
	a.packet(p.ts)
	b := p.payload
	if len(b) < 2 {
		a.drop(errPayloadShort)
	} else {
		switch typ := h265.NALUType((b[0] >> 1) & 0x3f); typ {
		case h265.NALUType_AggregationUnit:
			a.aggregate(b[2:], 2, false, func(n []byte) bool { return h265KeyType(h265.NALUType((n[0] >> 1) & 0x3f)) })
		case h265.NALUType_FragmentationUnit:
			if len(b) < 3 {
				a.drop(errPayloadShort)
				break
			}
			start, end := b[2]&0x80 != 0, b[2]&0x40 != 0
			if start {
				ft := h265.NALUType(b[2] & 0x3f)
				if h265KeyType(ft) {
					a.markKey()
				}
				a.fragStart(p.seq, []byte{b[0]&0x81 | byte(ft)<<1, b[1]}, b[3:], end)
			} else {
				a.fragMore(p.seq, b[3:], end)
			}
		case h265.NALUType_PACI:
			a.drop(errPacketType)
		default:
			if h265KeyType(typ) {
				a.markKey()
			}
			a.whole(b)
		}
	}
	if p.marker {
		a.finish()
	}
}

// aggregate adds the NAL units of an aggregation packet's payload (after
// its header): each after its 16-bit size, of at least minSize bytes. With
// padding, zero bytes after the last unit end it.
func (a *auAssembler) aggregate(b []byte, minSize int, padding bool, isKey func([]byte) bool) {
	n := 0
	for len(b) > 0 {
		if len(b) < 2 {
			a.drop(errAggregate)
			return
		}
		size := int(binary.BigEndian.Uint16(b))
		b = b[2:]
		if size == 0 && padding && n > 0 && allZero(b) {
			return
		}
		if size < minSize || size > len(b) {
			a.drop(errAggregate)
			return
		}
		if isKey(b[:size]) {
			a.markKey()
		}
		a.whole(b[:size])
		b = b[size:]
		n++
	}
	if n == 0 {
		a.drop(errAggregate)
	}
}
