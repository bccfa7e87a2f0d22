package live

import (
	"math/rand/v2"

	"github.com/pion/rtp"
	"github.com/pion/rtp/codecs"

	"github.com/vigia/vigia/media"
)

// packetizer turns a camera's video units into RTP packets (RFC 6184 for
// H.264, RFC 7798 for H.265), once for all its viewers. Sequence numbers
// and timestamps run on across the camera's runs, so a viewer watching
// through a reconnection of the camera sees one stream.
type packetizer struct {
	payloader rtp.Payloader
	seq       uint16
	tsOffset  uint32 // added to a unit's PTS in 90 kHz ticks
	lastTS    uint32
	started   bool // a unit of the current run was packetized
	buf       []byte
}

// newRun resets the payloader for a run of codec c.
func (p *packetizer) newRun(c media.Codec) {
	switch c {
	case media.H264:
		p.payloader = &codecs.H264Payloader{}
	case media.H265:
		p.payloader = &codecs.H265Payloader{}
	default:
		p.payloader = nil
	}
	if p.seq == 0 && p.lastTS == 0 {
		p.seq = uint16(rand.Uint32())
		p.lastTS = rand.Uint32()
	}
	p.started = false
}

// The NAL unit types of a sequence parameter set.
const (
	h264SPS = 7
	h265SPS = 33
)

// packetize returns the packets of u, a unit of track t; a keyframe
// without its parameter sets gets those of the track in front. It returns
// nil for a unit it cannot send.
func (p *packetizer) packetize(t *media.Track, u *media.Unit) *frame {
	if p.payloader == nil || len(u.NALUs) == 0 {
		return nil
	}
	ticks90 := uint32(ticks(u.PTS, 90000))
	if !p.started {
		// The run's first unit follows the previous run's last by a
		// frame's worth, whatever the new run's PTS.
		p.tsOffset = p.lastTS + 3000 - ticks90
		p.started = true
	}
	ts := ticks90 + p.tsOffset
	p.lastTS = ts

	buf := p.buf[:0]
	if u.Key && !hasParams(t.Codec, u.NALUs) {
		for _, ps := range [][]byte{t.VPS, t.SPS, t.PPS} {
			if len(ps) > 0 {
				buf = appendAnnexB(buf, ps)
			}
		}
	}
	for _, n := range u.NALUs {
		buf = appendAnnexB(buf, n)
	}
	p.buf = buf
	payloads := p.payloader.Payload(rtpMTU, buf)
	if len(payloads) == 0 {
		return nil
	}
	f := &frame{key: u.Key, pkts: make([]*rtp.Packet, len(payloads)), ts: ts}
	all := make([]rtp.Packet, len(payloads))
	for i, pl := range payloads {
		all[i] = rtp.Packet{
			Header: rtp.Header{Version: 2, Marker: i == len(payloads)-1,
				SequenceNumber: p.seq, Timestamp: ts},
			Payload: pl,
		}
		p.seq++
		f.pkts[i] = &all[i]
	}
	return f
}

func appendAnnexB(buf, nalu []byte) []byte {
	return append(append(buf, 0, 0, 0, 1), nalu...)
}

// hasParams reports whether nalus carry the codec's SPS (and, H.265, VPS).
func hasParams(c media.Codec, nalus [][]byte) bool {
	for _, n := range nalus {
		if len(n) == 0 {
			continue
		}
		if c == media.H265 {
			if typ := (n[0] >> 1) & 0x3f; typ == h265SPS {
				return true
			}
		} else if n[0]&0x1f == h264SPS {
			return true
		}
	}
	return false
}
