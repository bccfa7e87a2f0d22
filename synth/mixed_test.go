package synth

import "testing"

func TestCameraCodec(t *testing.T) {
	for _, tc := range []struct {
		name, codec string
		i           int
		want        string
	}{
		{"h264", CodecH264, 1, CodecH264},
		{"h265", CodecH265, 2, CodecH265},
		{"mixed, first", CodecMixed, 1, CodecH265},
		{"mixed, second", CodecMixed, 2, CodecH264},
		{"mixed, third", CodecMixed, 3, CodecH265},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CameraCodec(tc.codec, tc.i); got != tc.want {
				t.Fatalf("CameraCodec(%q, %d) = %q, want %q", tc.codec, tc.i, got, tc.want)
			}
		})
	}
}
