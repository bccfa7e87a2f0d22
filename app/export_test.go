//go:build cgo

package app

import (
	"bytes"
	"context"
	"image/jpeg"
	"testing"

	"github.com/bluenviron/mediacommon/v2/pkg/codecs/h264"

	"github.com/vigia/vigia/export"
	"github.com/vigia/vigia/synth"
)

// TestExportThumbnail: a downloadable video's thumbnail is decoded by a
// decoder process from the keyframe and the parameter sets of the
// segment's sample description.
func TestExportThumbnail(t *testing.T) {
	a := thumbsApp(t)
	clip, err := synth.Fixture(synth.CodecH264, false)
	if err != nil {
		t.Fatal(err)
	}
	kf := &export.Keyframe{Codec: clip.Track().Codec}
	for _, n := range clip.Units[0].NALUs {
		switch h264.NALUType(n[0] & 0x1f) {
		case h264.NALUTypeSPS:
			kf.SPS = n
		case h264.NALUTypePPS:
			kf.PPS = n
		default:
			kf.NALUs = append(kf.NALUs, n)
		}
	}
	if kf.SPS == nil || kf.PPS == nil {
		t.Fatal("fixture keyframe without parameter sets")
	}
	img, err := a.keyframeJPEG(context.Background(), kf)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(img))
	if err != nil || cfg.Width != exportThumbWidth || cfg.Height != 180 {
		t.Fatalf("thumbnail %dx%d: %v", cfg.Width, cfg.Height, err)
	}
	if st := a.decoders.Stats(); st.Requests != 1 {
		t.Fatalf("decoder stats %+v", st)
	}
	// A keyframe that does not decode makes no thumbnail.
	kf.NALUs = [][]byte{{0x65, 0xff, 0x00, 0x12}}
	if _, err := a.keyframeJPEG(context.Background(), kf); err == nil {
		t.Fatal("a garbage keyframe made a thumbnail")
	}
}
