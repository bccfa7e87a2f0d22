package rtsp

import (
	"errors"
	"fmt"

	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph264"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtph265"
	"github.com/bluenviron/gortsplib/v4/pkg/format/rtpmpeg4audio"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h265"
	"github.com/pion/rtp"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
)

// newReader picks the first H.264 or H.265 track and, when sound is on, the
// first AAC track of the session.
func newReader(desc *description.Session, sound bool) (*reader, error) {
	r := &reader{}
	var h264f *format.H264
	var h265f *format.H265
	if m := desc.FindFormat(&h264f); m != nil {
		sps, pps := h264f.SafeParams()
		r.medias = append(r.medias, m)
		r.formats = append(r.formats, h264f)
		r.tracks = append(r.tracks, &media.Track{Codec: media.H264, ClockRate: 90000, SPS: sps, PPS: pps})
	} else if m := desc.FindFormat(&h265f); m != nil {
		vps, sps, pps := h265f.SafeParams()
		r.medias = append(r.medias, m)
		r.formats = append(r.formats, h265f)
		r.tracks = append(r.tracks, &media.Track{Codec: media.H265, ClockRate: 90000, VPS: vps, SPS: sps, PPS: pps})
	} else {
		var names []string
		for _, m := range desc.Medias {
			for _, f := range m.Formats {
				names = append(names, f.Codec())
			}
		}
		return nil, ingest.Permanent(ingest.ReasonUnsupported, fmt.Errorf("no H.264 or H.265 track (offered: %v)", names))
	}
	if sound {
		var aac *format.MPEG4Audio
		if m := desc.FindFormat(&aac); m != nil && aac.Config != nil {
			r.medias = append(r.medias, m)
			r.formats = append(r.formats, aac)
			r.tracks = append(r.tracks, &media.Track{Codec: media.AAC, ClockRate: aac.ClockRate(), AAC: aac.Config})
		}
	}
	return r, nil
}

// dtsExtractor is the decoding-time extractor of H.264 or H.265.
type dtsExtractor interface {
	Extract(au [][]byte, pts int64) (int64, error)
}

// videoCodec holds what differs between H.264 and H.265 on the way from
// RTP to units.
type videoCodec struct {
	decode func(*rtp.Packet) ([][]byte, error)
	benign func(error) bool // a decode error that only means "wait for more"
	valid  func([][]byte) bool
	apply  func([][]byte) [][]byte
	isKey  func([][]byte) bool
	newDTS func() dtsExtractor
}

func (r *reader) registerH264(m *description.Media, f *format.H264, idx int) {
	dec, err := f.CreateDecoder()
	if err != nil {
		r.decodeError(err)
		return
	}
	sps, pps := f.SafeParams()
	params := &ingest.H264Params{SPS: sps, PPS: pps}
	r.registerVideo(m, f, idx, videoCodec{
		decode: dec.Decode,
		benign: func(err error) bool {
			return errors.Is(err, rtph264.ErrMorePacketsNeeded) || errors.Is(err, rtph264.ErrNonStartingPacketAndNoPrevious)
		},
		valid: validH264,
		apply: params.Apply,
		isKey: h264.IsRandomAccess,
		newDTS: func() dtsExtractor {
			d := &h264.DTSExtractor{}
			d.Initialize()
			return d
		},
	})
}

func (r *reader) registerH265(m *description.Media, f *format.H265, idx int) {
	dec, err := f.CreateDecoder()
	if err != nil {
		r.decodeError(err)
		return
	}
	vps, sps, pps := f.SafeParams()
	params := &ingest.H265Params{VPS: vps, SPS: sps, PPS: pps}
	r.registerVideo(m, f, idx, videoCodec{
		decode: dec.Decode,
		benign: func(err error) bool {
			return errors.Is(err, rtph265.ErrMorePacketsNeeded) || errors.Is(err, rtph265.ErrNonStartingPacketAndNoPrevious)
		},
		valid: validH265,
		apply: params.Apply,
		isKey: h265.IsRandomAccess,
		newDTS: func() dtsExtractor {
			d := &h265.DTSExtractor{}
			d.Initialize()
			return d
		},
	})
}

// registerVideo turns the RTP of a video track into units: depacketize,
// check, put parameter sets in front of keyframes, wait for the first
// keyframe, then compute decoding times.
func (r *reader) registerVideo(m *description.Media, f format.Format, idx int, c videoCodec) {
	var dts dtsExtractor
	r.client.OnPacketRTP(m, f, func(pkt *rtp.Packet) {
		r.guard(func() {
			pts, ok := r.client.PacketPTS2(m, pkt)
			if !ok {
				return
			}
			au, err := c.decode(pkt)
			if err != nil {
				if !c.benign(err) {
					r.decodeError(err)
				}
				return
			}
			if !c.valid(au) {
				r.decodeError(ErrInvalidUnit)
				return
			}
			// The unit keeps au without a copy: gortsplib reads every RTP
			// packet into a buffer of its own and never reuses the access
			// units it returns, and the parameter sets put in front are
			// replaced when they change, never written over.
			au = c.apply(au)
			key := c.isKey(au)
			if dts == nil {
				if !key {
					return
				}
				dts = c.newDTS()
			}
			o, wall := r.videoTime(ticksToDuration(pts, 90000))
			ot := durationToTicks(o, 90000)
			d, err := dts.Extract(au, ot)
			if err != nil {
				r.decodeError(err)
				dts = nil
				return
			}
			r.deliver(&media.Unit{Track: idx, PTS: ticksToDuration(ot, 90000), DTS: ticksToDuration(d, 90000), Time: wall, Key: key, NALUs: au})
		})
	})
}

func (r *reader) registerAAC(m *description.Media, f *format.MPEG4Audio, idx int) {
	dec, err := f.CreateDecoder()
	if err != nil {
		r.decodeError(err)
		return
	}
	rate := f.ClockRate()
	r.client.OnPacketRTP(m, f, func(pkt *rtp.Packet) {
		r.guard(func() {
			pts, ok := r.client.PacketPTS2(m, pkt)
			if !ok {
				return
			}
			aus, err := dec.Decode(pkt)
			if err != nil {
				if !errors.Is(err, rtpmpeg4audio.ErrMorePacketsNeeded) {
					r.decodeError(err)
				}
				return
			}
			for i, au := range aus {
				p, wall, ok := r.otherTime(ticksToDuration(pts+int64(i)*1024, rate))
				if !ok {
					return // before the first video frame
				}
				r.deliver(&media.Unit{Track: idx, PTS: p, DTS: p, Time: wall, Payload: au})
			}
		})
	})
}
