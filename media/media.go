// Package media holds the types that flow from a source to the pipeline:
// tracks (codec and parameter sets) and access units with their times.
// It has no networking and no container code.
package media

import (
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/mpeg4audio"
)

// Codec names a codec Vigia records.
type Codec string

// Codecs Vigia records (H.264, H.265, AAC) or takes from cameras to
// transcode (G.711 and Opus audio become AAC before the segmenter). A
// video codec other than these is refused as unsupported.
const (
	H264 Codec = "H264"
	H265 Codec = "H265"
	AAC  Codec = "AAC"

	// G711U and G711A are G.711 µ-law and A-law (RTP PCMU and PCMA): one
	// byte per sample and channel, channels interleaved.
	G711U Codec = "PCMU"
	G711A Codec = "PCMA"

	// Opus units are Opus packets (RFC 6716), on a 48 kHz clock.
	Opus Codec = "Opus"
)

// IsVideo reports whether c is a video codec.
func (c Codec) IsVideo() bool { return c == H264 || c == H265 }

// Known reports whether c is one of the codecs above. A source may list
// an audio track of another codec, named as the camera names it ("G726",
// "MPA"), that it does not receive: no unit refers to it, and it tells
// the pipeline why the camera is recorded without sound.
func (c Codec) Known() bool {
	switch c {
	case H264, H265, AAC, G711U, G711A, Opus:
		return true
	}
	return false
}

// Track describes one elementary stream of a source.
type Track struct {
	// Codec of the track.
	Codec Codec

	// ClockRate is the RTP clock rate of the track (90000 for video, the
	// sample rate for AAC and G.711, 48000 for Opus). Times in Units are
	// durations, not ticks.
	ClockRate int

	// Channels is the channel count of a G.711 or Opus track; 0 means 1.
	// An AAC track's is in AAC.
	Channels int

	// VPS, SPS and PPS are the video parameter sets known when the track was
	// announced (from the SDP or the first access unit). VPS is H.265 only.
	VPS, SPS, PPS []byte

	// AAC is the AudioSpecificConfig of an AAC track.
	AAC *mpeg4audio.AudioSpecificConfig
}

// Unit is one access unit: a whole video frame (all its NAL units), one AAC
// frame, one Opus packet or the G.711 samples of one RTP packet.
type Unit struct {
	// Track is the index of the unit's track in the source's track list.
	Track int

	// PTS and DTS are presentation and decoding times relative to the start
	// of the source's run, unwrapped and monotonic (DTS) within one run.
	PTS, DTS time.Duration

	// Time is the wall-clock time of the unit (from RTCP sender reports when
	// the camera sends them, otherwise the receive time of the first unit
	// plus PTS).
	Time time.Time

	// Key is true for a video unit that starts a GOP (IDR / IRAP).
	Key bool

	// Gap is set on a video keyframe when units of the run before it were
	// lost (RTP packets missing): the frames in between were dropped, since
	// they referred to what was lost, and recordings close at the gap.
	Gap bool

	// NALUs of a video unit, without start codes or length prefixes.
	NALUs [][]byte

	// Payload of an audio unit: one raw AAC frame (no ADTS header), one
	// Opus packet, or G.711 samples.
	Payload []byte

	// Buf, when set, is the pooled memory NALUs and Payload point into; the
	// pipeline gives it back with Release once it is done with the unit.
	Buf *Buffer

	// Stored, when valid, tells where the segmenter wrote the bytes of a
	// video unit: a consumer that needs the frame after its Unit call
	// returns reads it back from there instead of keeping the unit.
	Stored Stored
}

// Release gives u's pooled memory back (see Buffer). Only the pipeline that
// owns u calls it, after the segmenter and every consumer have returned
// from u; nothing may read u's NAL units or payload afterwards.
func (u *Unit) Release() {
	if u.Buf != nil {
		u.Buf.Put()
		u.Buf, u.NALUs, u.Payload = nil, nil, nil
	}
}

// Size returns the payload bytes of u.
func (u *Unit) Size() int {
	n := len(u.Payload)
	for _, nalu := range u.NALUs {
		n += len(nalu)
	}
	return n
}

// Clone returns a copy of u whose NAL units and payload are in memory of
// its own, for a consumer that keeps a unit past its call.
func (u *Unit) Clone() *Unit {
	c := *u
	c.Buf = nil
	c.NALUs = CloneNALUs(u.NALUs)
	if u.Payload != nil {
		c.Payload = append([]byte(nil), u.Payload...)
	}
	return &c
}

// CloneNALUs copies nalus into one allocation of their total size.
func CloneNALUs(nalus [][]byte) [][]byte {
	if nalus == nil {
		return nil
	}
	n := 0
	for _, b := range nalus {
		n += len(b)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(nalus))
	for i, b := range nalus {
		buf = append(buf, b...)
		out[i] = buf[len(buf)-len(b) : len(buf) : len(buf)]
	}
	return out
}
