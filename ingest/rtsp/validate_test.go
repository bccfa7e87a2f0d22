package rtsp

import (
	"testing"

	"github.com/vigia/vigia/synth"
)

// TestValidUnitsOfRealStreams: every access unit of the synthetic clips
// (real encoder output) passes the checks; garbage mostly does not.
func TestValidUnitsOfRealStreams(t *testing.T) {
	for _, tc := range []struct {
		codec string
		valid func([][]byte) bool
	}{{"h264", validH264}, {"h265", validH265}} {
		for _, small := range []bool{false, true} {
			clip, err := synth.Fixture(tc.codec, small)
			if err != nil {
				t.Fatal(err)
			}
			for i, u := range clip.Units {
				if !tc.valid(u.NALUs) {
					t.Fatalf("%s unit %d of the clip refused", tc.codec, i)
				}
			}
		}
	}
	// A NALU with the forbidden bit, a reserved type, an IDR with a P slice.
	for name, au := range map[string][][]byte{
		"forbidden bit": {{0xe5, 0x88}},
		"reserved type": {{0x77, 0x88}},
		"stap-a":        {{0x78, 0x00, 0x02, 0x65, 0x88}},
		"idr p slice":   {{0x65, 0b1_011_0000}},
		"sei only":      {{0x06, 0x05, 0x01}},
	} {
		if validH264(au) {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzValidUnit: the checks never panic on any NALUs.
func FuzzValidUnit(f *testing.F) {
	clip, err := synth.Fixture("h264", true)
	if err != nil {
		f.Fatal(err)
	}
	for _, u := range clip.Units[:3] {
		f.Add(u.NALUs[0], []byte{})
	}
	f.Add([]byte{0x65, 0x00}, []byte{0x67, 0x42})
	f.Add([]byte{0x40, 0x01, 0x0c}, []byte{0x26, 0x01, 0xaf})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		au := [][]byte{a, b}
		_ = validH264(au)
		_ = validH265(au)
		_ = validSliceHeader(a, true)
	})
}
