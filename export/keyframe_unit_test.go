package export

import (
	"slices"
	"testing"
)

func TestKeyframeUnit(t *testing.T) {
	b := func(s string) []byte { return []byte(s) }
	for _, tc := range []struct {
		name string
		kf   Keyframe
		want []string
	}{
		{"h264", Keyframe{SPS: b("sps"), PPS: b("pps"), NALUs: [][]byte{b("idr")}}, []string{"sps", "pps", "idr"}},
		{"h265", Keyframe{VPS: b("vps"), SPS: b("sps"), PPS: b("pps"), NALUs: [][]byte{b("sei"), b("idr")}}, []string{"vps", "sps", "pps", "sei", "idr"}},
		{"no parameter sets", Keyframe{NALUs: [][]byte{b("idr")}}, []string{"idr"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, n := range tc.kf.Unit() {
				got = append(got, string(n))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Unit = %q, want %q", got, tc.want)
			}
		})
	}
}
