package storage

import (
	"maps"
	"testing"
)

func TestSegmentMetadata(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    SegmentMeta
		want map[string]string
	}{
		{"video", SegmentMeta{Codec: "h264", Width: 1280, Height: 720, InitSize: 812, Frames: 60, Node: "n1"},
			map[string]string{"codec": "h264", "width": "1280", "height": "720", "init-size": "812", "frames": "60", "node": "n1"}},
		{"audio, recovered", SegmentMeta{Codec: "h265", Width: 640, Height: 360, InitSize: 900, Frames: 30, Node: "n2", AudioCodec: "aac", Recovered: true},
			map[string]string{"codec": "h265", "width": "640", "height": "360", "init-size": "900", "frames": "30", "node": "n2", "audio-codec": "aac", "recovered": "1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := tc.m.Metadata()
			if !maps.Equal(md, tc.want) {
				t.Fatalf("Metadata = %v, want %v", md, tc.want)
			}
			if _, err := NormalizeMetadata(md); err != nil {
				t.Fatalf("not storable: %v", err)
			}
		})
	}
}
