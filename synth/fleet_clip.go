package synth

import (
	"encoding/binary"
	"fmt"
)

// Sizes of the headers in front of each packet of a prepared frame.
const (
	interleavedHeaderSize = 4  // '$', channel, 16-bit length
	rtpHeaderSize         = 12 // version 2, no CSRC, no extension
)

// wireFrame is one frame of a clip as it goes on the RTSP connection: every
// RTP packet of the frame as an interleaved frame ('$', channel, length, RTP
// header, payload), back to back in one buffer. Channel, sequence number,
// timestamp and SSRC are placeholders, written over for each session just
// before the frame is sent (stamp), so one buffer serves every session of
// the fleet: the scheduler writes frames one session at a time, and the
// kernel has copied the bytes when the write returns.
type wireFrame struct {
	buf     []byte
	packets []int32 // offset of each packet's interleaved header in buf
	payload uint32  // RTP payload bytes, for the sender report's octet count
	key     bool
}

// wireTrack is a clip of one track prepared for the fleet.
type wireTrack struct {
	frames []wireFrame
	gop    int // frames from one keyframe to the next (video)
}

// newWireTrack lays out the pre-encoded payloads of a clip (pays[i] are the
// RTP payloads of frame i) as wire frames with payload type pt.
func newWireTrack(pays [][]rtpPayload, keys func(i int) bool, pt uint8) (*wireTrack, error) {
	t := &wireTrack{frames: make([]wireFrame, len(pays))}
	for i, ps := range pays {
		size := 0
		for _, p := range ps {
			if len(p.payload)+rtpHeaderSize > 0xffff {
				return nil, fmt.Errorf("frame %d: RTP packet of %d bytes does not fit an interleaved frame: %w",
					i, len(p.payload)+rtpHeaderSize, ErrBadClip)
			}
			size += interleavedHeaderSize + rtpHeaderSize + len(p.payload)
		}
		f := wireFrame{buf: make([]byte, 0, size), packets: make([]int32, 0, len(ps)), key: keys(i)}
		for _, p := range ps {
			f.packets = append(f.packets, int32(len(f.buf)))
			n := rtpHeaderSize + len(p.payload)
			m := pt
			if p.marker {
				m |= 0x80
			}
			f.buf = append(f.buf, '$', 0, byte(n>>8), byte(n), 0x80, m)
			f.buf = append(f.buf, make([]byte, 10)...) // sequence, timestamp, SSRC
			f.buf = append(f.buf, p.payload...)
			f.payload += uint32(len(p.payload))
		}
		t.frames[i] = f
	}
	t.gop = len(t.frames)
	for i := 1; i < len(t.frames); i++ {
		if t.frames[i].key {
			t.gop = i
			break
		}
	}
	return t, nil
}

// stamp writes a session's channel, sequence numbers (from seq on, one per
// packet), timestamp and SSRC into f and returns the next sequence number.
func (f *wireFrame) stamp(channel byte, seq uint16, ts, ssrc uint32) uint16 {
	for _, off := range f.packets {
		h := f.buf[off:]
		h[1] = channel
		binary.BigEndian.PutUint16(h[6:], seq)
		binary.BigEndian.PutUint32(h[8:], ts)
		binary.BigEndian.PutUint32(h[12:], ssrc)
		seq++
	}
	return seq
}

// fleetClips are the prepared tracks of one codec: shared by every camera
// of that codec.
type fleetClips struct {
	codec string
	clip  *Clip
	video *wireTrack
	audio *wireTrack // nil when the fleet has no audio
	aac   *AudioClip
	sdp   []byte // the session description of a camera (fleetSDP)
}

// newFleetClips prepares the 720p clip of codec, and the AAC clip when
// audio is on.
func newFleetClips(codec string, audio bool) (*fleetClips, error) {
	clip, err := Fixture(codec, false)
	if err != nil {
		return nil, err
	}
	fc := &fleetClips{codec: codec, clip: clip}
	if fc.video, err = newWireTrack(clip.packets, func(i int) bool { return clip.Units[i].Key }, videoPayloadType); err != nil {
		return nil, err
	}
	if audio {
		if fc.aac, err = AudioFixture(); err != nil {
			return nil, err
		}
		if fc.audio, err = newWireTrack(fc.aac.packets, func(int) bool { return true }, audioPayloadType); err != nil {
			return nil, err
		}
	}
	if fc.sdp, err = fleetSDP(fc); err != nil {
		return nil, err
	}
	return fc, nil
}
