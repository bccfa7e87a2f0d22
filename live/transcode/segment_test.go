//go:build cgo

package transcode

import (
	"bytes"
	"errors"
	"testing"

	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/fmp4/seekablebuffer"
	"github.com/bluenviron/mediacommon/v2/pkg/formats/mp4/codecs"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/thumbs/decoder"
)

// fixtureSegment writes n frames of a fixture clip as a recorded segment:
// an init segment and one fragment of video (track 1, 90 kHz) starting at
// base ticks.
func fixtureSegment(t *testing.T, codec string, n int, base uint64) ([]byte, *synth.Clip) {
	t.Helper()
	clip, err := synth.Fixture(codec, true)
	if err != nil {
		t.Fatal(err)
	}
	init := fmp4.Init{}
	if codec == synth.CodecH265 {
		init.Tracks = []*fmp4.InitTrack{{ID: 1, TimeScale: 90000, Codec: &codecs.H265{VPS: clip.VPS, SPS: clip.SPS, PPS: clip.PPS}}}
	} else {
		init.Tracks = []*fmp4.InitTrack{{ID: 1, TimeScale: 90000, Codec: &codecs.H264{SPS: clip.SPS, PPS: clip.PPS}}}
	}
	pt := &fmp4.PartTrack{ID: 1, BaseTime: base}
	dur := uint32(90000 / clip.FPS)
	for _, u := range clip.Units[:n] {
		s := &fmp4.Sample{}
		if codec == synth.CodecH265 {
			err = s.FillH265(0, u.NALUs)
		} else {
			err = s.FillH264(0, u.NALUs)
		}
		if err != nil {
			t.Fatal(err)
		}
		s.Duration = dur
		s.IsNonSyncSample = !u.Key
		pt.Samples = append(pt.Samples, s)
	}
	var buf seekablebuffer.Buffer
	if err := init.Marshal(&buf); err != nil {
		t.Fatal(err)
	}
	if err := (fmp4.Part{SequenceNumber: 1, Tracks: []*fmp4.PartTrack{pt}}).Marshal(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), clip
}

// TestSegmentRendition: a recorded H.265 segment becomes an H.264 one with
// the same number of frames, the same start and length, every frame
// decodable by libavcodec's H.264 decoder from the init segment's SPS and
// PPS.
func TestSegmentRendition(t *testing.T) {
	const n, base = 40, 123456
	in, clip := fixtureSegment(t, synth.CodecH265, n, base)
	out, err := Segment(in, Options{FPS: int(clip.FPS)})
	if err != nil {
		t.Fatal(err)
	}
	var init fmp4.Init
	if err := init.Unmarshal(bytes.NewReader(out)); err != nil {
		t.Fatal(err)
	}
	c, ok := init.Tracks[0].Codec.(*codecs.H264)
	if !ok || len(init.Tracks) != 1 || init.Tracks[0].TimeScale != 90000 {
		t.Fatalf("rendition's init: %d tracks, codec %T; want one H.264 track at 90 kHz", len(init.Tracks), init.Tracks[0].Codec)
	}
	var parts fmp4.Parts
	if err := parts.Unmarshal(out[boxOffset(out, "moof"):]); err != nil {
		t.Fatal(err)
	}
	pt := parts[0].Tracks[0]
	if len(pt.Samples) != n || pt.BaseTime != base {
		t.Fatalf("rendition: %d samples from %d; want %d from %d", len(pt.Samples), pt.BaseTime, n, base)
	}
	var total uint64
	dec, err := decoder.New(media.H264, decoder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	for i, s := range pt.Samples {
		total += uint64(s.Duration)
		au, err := s.GetH264()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if s.IsNonSyncSample {
				t.Fatal("the rendition does not start with a keyframe")
			}
			au = append([][]byte{c.SPS, c.PPS}, au...)
		}
		if pic, err := dec.Decode(au); err != nil || !pic {
			t.Fatalf("frame %d: picture %v, %v", i, pic, err)
		}
	}
	if want := uint64(n) * uint64(90000/clip.FPS); total != want {
		t.Fatalf("rendition lasts %d ticks; want %d", total, want)
	}
}

// TestSegmentRenditionOfH264: an H.264 segment needs none.
func TestSegmentRenditionOfH264(t *testing.T) {
	in, _ := fixtureSegment(t, synth.CodecH264, 10, 0)
	if _, err := Segment(in, Options{}); !errors.Is(err, ErrNotH265) {
		t.Fatalf("Segment of H.264: %v; want ErrNotH265", err)
	}
	if _, err := Segment([]byte("not a segment"), Options{}); !errors.Is(err, ErrBadSegment) {
		t.Fatalf("Segment of garbage: %v; want ErrBadSegment", err)
	}
}
