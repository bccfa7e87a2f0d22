package transcode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4/seekablebuffer"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mp4/codecs"

	"github.com/vigia/vigia/media"
)

// ErrNotH265 is returned by Segment for a segment whose video is not
// H.265: it plays as it is.
var ErrNotH265 = errors.New("transcode: the segment's video is not H.265")

// ErrBadSegment is returned by Segment for bytes that are not a
// fragmented MP4 segment with a video track.
var ErrBadSegment = errors.New("transcode: not a recorded segment")

// Rendition returns the H.264 rendition of a recorded segment, as
// Segment with the node's options, or nil for a segment whose video is
// not H.265 (it plays, and is exported, as it is). nil itself in a build
// that cannot transcode (Available false), for callers to refuse.
func Rendition() func(segment []byte) ([]byte, error) {
	if !Available() {
		return nil
	}
	return func(seg []byte) ([]byte, error) {
		out, err := Segment(seg, Options{})
		if errors.Is(err, ErrNotH265) {
			return nil, nil
		}
		return out, err
	}
}

// Segment returns the H.264 rendition of a recorded fragmented-MP4
// segment (its init segment, then its fragments) whose video is H.265:
// the same tracks, times and audio samples, the video transcoded into one
// fragment. It returns ErrNotH265 when the video is already something
// else.
func Segment(data []byte, opts Options) ([]byte, error) {
	var init fmp4.Init
	if err := init.Unmarshal(bytes.NewReader(data)); err != nil {
		return nil, fmt.Errorf("%w: init: %w", ErrBadSegment, err)
	}
	var vt *fmp4.InitTrack
	var params [][]byte
	for _, tr := range init.Tracks {
		switch c := tr.Codec.(type) {
		case *codecs.H265:
			vt, params = tr, [][]byte{c.VPS, c.SPS, c.PPS}
		case *codecs.H264:
			return nil, ErrNotH265
		}
		if vt != nil {
			break
		}
	}
	if vt == nil || vt.TimeScale == 0 {
		return nil, fmt.Errorf("%w: no video track", ErrBadSegment)
	}
	moof := boxOffset(data, "moof")
	if moof < 0 {
		return nil, fmt.Errorf("%w: no fragment", ErrBadSegment)
	}
	var parts fmp4.Parts
	if err := parts.Unmarshal(data[moof:]); err != nil {
		return nil, fmt.Errorf("%w: fragments: %w", ErrBadSegment, err)
	}

	scale := int64(vt.TimeScale)
	toDur := func(v int64) time.Duration {
		return time.Duration(v/scale)*time.Second + time.Duration(v%scale)*time.Second/time.Duration(scale)
	}
	toTicks := func(d time.Duration) int64 {
		return int64(d/time.Second)*scale + int64(d%time.Second)*scale/int64(time.Second)
	}
	tr, err := New(media.H265, opts)
	if err != nil {
		return nil, err
	}
	defer tr.Close()

	var out []Unit
	keep := func(us []Unit) {
		for _, u := range us {
			c := Unit{PTS: u.PTS, Key: u.Key}
			for _, n := range u.NALUs {
				c.NALUs = append(c.NALUs, append([]byte(nil), n...))
			}
			out = append(out, c)
		}
	}
	var firstDTS int64 = -1
	var end int64 // decoding end of the video, in ticks
	others := map[int]*fmp4.PartTrack{}
	var otherIDs []int
	for _, p := range parts {
		for _, pt := range p.Tracks {
			if pt.ID != vt.ID {
				o := others[pt.ID]
				if o == nil {
					o = &fmp4.PartTrack{ID: pt.ID, BaseTime: pt.BaseTime}
					others[pt.ID] = o
					otherIDs = append(otherIDs, pt.ID)
				}
				o.Samples = append(o.Samples, pt.Samples...)
				continue
			}
			dts := int64(pt.BaseTime)
			if firstDTS < 0 {
				firstDTS = dts
			}
			for _, s := range pt.Samples {
				nalus, err := s.GetH265()
				if err != nil {
					return nil, fmt.Errorf("%w: sample: %w", ErrBadSegment, err)
				}
				us, err := tr.Push(nalus, toDur(dts+int64(s.PTSOffset)), !s.IsNonSyncSample, params)
				if err != nil {
					return nil, err
				}
				keep(us)
				dts += int64(s.Duration)
			}
			end = dts
		}
	}
	us, err := tr.Flush()
	if err != nil {
		return nil, err
	}
	keep(us)
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no picture decoded", ErrBadSegment)
	}

	// The H.264 track: parameter sets from the first keyframe, samples
	// in presentation order (no reordering), from the first one's time.
	var sps, pps []byte
	for _, n := range out[0].NALUs {
		switch h264.NALUType(n[0] & 0x1f) {
		case h264.NALUTypeSPS:
			sps = n
		case h264.NALUTypePPS:
			pps = n
		}
	}
	if sps == nil || pps == nil {
		return nil, fmt.Errorf("%w: the encoder gave no SPS and PPS", ErrTranscode)
	}
	oinit := fmp4.Init{}
	for _, t := range init.Tracks {
		if t == vt {
			oinit.Tracks = append(oinit.Tracks, &fmp4.InitTrack{ID: vt.ID, TimeScale: vt.TimeScale, Codec: &codecs.H264{SPS: sps, PPS: pps}})
		} else {
			oinit.Tracks = append(oinit.Tracks, t)
		}
	}
	base := toTicks(out[0].PTS)
	if base < firstDTS {
		base = firstDTS
	}
	vpt := &fmp4.PartTrack{ID: vt.ID, BaseTime: uint64(base)}
	t := base
	for i, u := range out {
		next := end
		if i+1 < len(out) {
			next = max(toTicks(out[i+1].PTS), t+1)
		}
		if next <= t {
			next = t + scale/int64(max(opts.withDefaults().FPS, 1))
		}
		var au [][]byte
		for _, n := range u.NALUs {
			if typ := h264.NALUType(n[0] & 0x1f); typ != h264.NALUTypeSPS && typ != h264.NALUTypePPS {
				au = append(au, n)
			}
		}
		s := &fmp4.Sample{}
		if err := s.FillH264(0, au); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTranscode, err)
		}
		s.Duration = uint32(next - t)
		s.IsNonSyncSample = !u.Key
		vpt.Samples = append(vpt.Samples, s)
		t = next
	}
	part := fmp4.Part{SequenceNumber: 1, Tracks: []*fmp4.PartTrack{vpt}}
	for _, id := range otherIDs {
		part.Tracks = append(part.Tracks, others[id])
	}
	var buf seekablebuffer.Buffer
	if err := oinit.Marshal(&buf); err != nil {
		return nil, fmt.Errorf("%w: init: %w", ErrTranscode, err)
	}
	if err := part.Marshal(&buf); err != nil {
		return nil, fmt.Errorf("%w: fragment: %w", ErrTranscode, err)
	}
	return buf.Bytes(), nil
}

// boxOffset returns the offset of the first top-level box of type typ,
// or -1.
func boxOffset(b []byte, typ string) int {
	for off := 0; off+8 <= len(b); {
		size := int(binary.BigEndian.Uint32(b[off:]))
		if string(b[off+4:off+8]) == typ {
			return off
		}
		if size == 1 && off+16 <= len(b) {
			size = int(binary.BigEndian.Uint64(b[off+8:]))
		}
		if size < 8 || size > len(b)-off {
			return -1
		}
		off += size
	}
	return -1
}
