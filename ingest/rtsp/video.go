package rtsp

import (
	"bytes"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
)

// packetHandler takes the RTP packets of one track. Its packet method is
// called from one goroutine at a time; p's payload is valid only during
// the call.
type packetHandler interface {
	packet(p *rtpPacket, now time.Time)
}

// dtsExtractor is the decoding-time extractor of H.264 or H.265.
type dtsExtractor interface {
	Extract(au [][]byte, pts int64) (int64, error)
}

// videoCodec holds what differs between H.264 and H.265 on the way from
// RTP to units.
type videoCodec struct {
	sps    func([][]byte) []byte // the access unit's SPS, nil without one
	valid  func([][]byte) bool
	params func([][]byte) bool // only parameter sets: noted, not a frame
	apply  func([][]byte) [][]byte
	isKey  func([][]byte) bool
	newDTS func() dtsExtractor
	newDep func(emit func([][]byte, uint32, *media.Buffer), fail func(error)) depacketizer
}

func h264Codec(sps, pps []byte) videoCodec {
	params := &ingest.H264Params{SPS: sps, PPS: pps}
	return videoCodec{
		sps: func(au [][]byte) []byte {
			return findNALU(au, func(n []byte) bool { return h264.NALUType(n[0]&0x1f) == h264.NALUTypeSPS })
		},
		valid: validH264, params: paramsH264, apply: params.Apply, isKey: h264.IsRandomAccess,
		newDTS: func() dtsExtractor {
			d := &h264.DTSExtractor{}
			d.Initialize()
			return d
		},
		newDep: func(emit func([][]byte, uint32, *media.Buffer), fail func(error)) depacketizer {
			return newH264Depacketizer(emit, fail)
		},
	}
}

func h265Codec(vps, sps, pps []byte) videoCodec {
	params := &ingest.H265Params{VPS: vps, SPS: sps, PPS: pps}
	return videoCodec{
		sps: func(au [][]byte) []byte {
			return findNALU(au, func(n []byte) bool { return len(n) > 1 && h265.NALUType((n[0]>>1)&0x3f) == h265.NALUType_SPS_NUT })
		},
		valid: validH265, params: paramsH265, apply: params.Apply, isKey: h265.IsRandomAccess,
		newDTS: func() dtsExtractor {
			d := &h265.DTSExtractor{}
			d.Initialize()
			return d
		},
		newDep: func(emit func([][]byte, uint32, *media.Buffer), fail func(error)) depacketizer {
			return newH265Depacketizer(emit, fail)
		},
	}
}

// videoTrack turns the RTP of a video track into units: depacketize,
// check, put parameter sets in front of keyframes, wait for the first
// keyframe, then compute decoding times.
type videoTrack struct {
	r   *reader
	idx int
	c   videoCodec
	dep depacketizer
	dts dtsExtractor
	now time.Time // arrival of the packet being handled

	seqStarted bool
	nextSeq    uint16
	lost       bool // a unit was lost: drop until the next keyframe
	delivered  bool // a unit was handed on: the next loss is a gap

	sps  []byte      // the SPS of the last keyframe (a copy)
	cont dtsSmoother // decoding times across restarts of the extractor
}

func newVideoTrack(r *reader, idx int, c videoCodec) *videoTrack {
	v := &videoTrack{r: r, idx: idx, c: c}
	v.dep = c.newDep(v.unit, v.failed)
	return v
}

func (v *videoTrack) packet(p *rtpPacket, now time.Time) {
	v.now = now
	if v.seqStarted && p.seq != v.nextSeq {
		// Packets are missing (UDP loss, or a server that dropped them):
		// the unit being assembled may lack its end, and the units that
		// follow refer to what was lost.
		v.dep.lost()
		v.lost = true
	}
	v.seqStarted, v.nextSeq = true, p.seq+1
	v.dep.push(p)
}

// failed counts a unit the depacketizer dropped; what follows it waits
// for a keyframe.
func (v *videoTrack) failed(err error) {
	v.lost = true
	v.r.decodeError(err)
}

// unit handles one depacketized access unit, whose NAL units are in buf:
// the unit handed on takes buf (the pipeline gives it back), a unit
// dropped here gives it back at once. Parameter sets are recorded, and put
// in the unit, as copies (ingest.H264Params).
func (v *videoTrack) unit(au [][]byte, ts uint32, buf *media.Buffer) {
	r := v.r
	if !v.c.valid(au) {
		if v.c.params(au) {
			v.c.apply(au) // parameter sets sent apart from the frame
		} else {
			v.failed(ErrInvalidUnit)
		}
		buf.Put()
		return
	}
	au = v.c.apply(au)
	key := v.c.isKey(au)
	gap := false
	if v.lost {
		if !key {
			buf.Put()
			return // refers to a lost unit
		}
		// The keyframe after a loss starts a new segment: its decoding
		// times start afresh, as at the first keyframe, instead of being
		// spread over the hole by the extractor (which derives each
		// decoding time from the last one).
		v.lost, gap, v.dts = false, v.delivered, nil
	}
	if v.dts == nil {
		if !key {
			buf.Put()
			return
		}
		v.dts = v.c.newDTS()
		v.cont.restart()
	}
	if key {
		// A new SPS (a new picture size) restarts the extractor too.
		if sps := v.c.sps(au); sps != nil {
			if v.sps != nil && !bytes.Equal(sps, v.sps) {
				v.cont.restart()
			}
			v.sps = append(v.sps[:0], sps...)
		}
	}
	pt := r.videoTicks(ts, v.now)
	d, err := v.dts.Extract(au, pt)
	if err != nil {
		v.failed(err)
		v.dts = nil
		buf.Put()
		return
	}
	d = v.cont.next(d, pt, key)
	pts, dts, wall := r.videoTimes(pt, d, v.now)
	v.delivered = true
	r.deliver(&media.Unit{Track: v.idx, PTS: pts, DTS: dts, Time: wall, Key: key, Gap: gap, NALUs: au, Buf: buf}, v.now)
}

// findNALU returns the first NAL unit of au that is, nil without one.
func findNALU(au [][]byte, is func([]byte) bool) []byte {
	for _, n := range au {
		if len(n) > 0 && is(n) {
			return n
		}
	}
	return nil
}

// dtsSmoother keeps decoding times continuous when the DTS extractor
// starts afresh in the middle of a stream: after a loss, and at a new SPS
// (a new picture size), which resets the extractor's state. A fresh
// extractor gives its first keyframe its presentation time as decoding time
// (a jump ahead by the reorder delay with B-frames), then spaces the next
// frames 90 ticks apart until it has learnt the delay again: in a segment,
// a keyframe starting late and frames that flash by; on the session's
// clock, a jump that passes for a wrong rate. During such a restart the
// decoding times go on from the stream's own: the keyframe's is its
// presentation time less the delay of the last keyframe before, the next
// ones a frame interval apart, until the extractor's catch up.
//
// The first keyframe of a session has no delay to go by: the extractor's
// start stands (docs/recording.md, Timing).
type dtsSmoother struct {
	last     int64 // the last decoding time handed on, 90 kHz
	step     int64 // its distance from the one before: the frame interval
	keyDelay int64 // presentation less decoding time of the last keyframe, outside restarts
	have     bool

	catching int  // frames left to a restart's catch-up; 0 outside one
	atKey    bool // the restart's keyframe comes next
}

// maxCatchUp bounds a restart: the extractor learns a reorder delay of up
// to 10 frames within that many frames.
const maxCatchUp = 32

// restart notes that the extractor starts afresh at the next keyframe.
func (s *dtsSmoother) restart() {
	if s.have && s.step > 0 {
		s.catching, s.atKey = maxCatchUp, true
	}
}

// next returns the decoding time to hand on for the extractor's ext, of a
// unit presented at pts.
func (s *dtsSmoother) next(ext, pts int64, key bool) int64 {
	out := ext
	if s.catching > 0 {
		s.catching--
		want := s.last + s.step
		if s.atKey && key {
			want = max(pts-s.keyDelay, s.last+1)
		}
		s.atKey = false
		if ext > want && want <= pts {
			out = want
		} else {
			s.catching = 0 // caught up
		}
	}
	if s.have && out <= s.last {
		out = s.last + 1
	}
	if s.have && s.catching == 0 {
		s.step = out - s.last
	}
	if key && s.catching == 0 {
		s.keyDelay = pts - out
	}
	s.last, s.have = out, true
	return out
}
