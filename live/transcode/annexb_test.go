package transcode

import (
	"bytes"
	"testing"
)

func TestSplitAnnexB(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want [][]byte
	}{
		{"empty", nil, nil},
		{"four-byte codes", []byte{0, 0, 0, 1, 0x67, 1, 2, 0, 0, 0, 1, 0x68, 3}, [][]byte{{0x67, 1, 2}, {0x68, 3}}},
		{"three-byte codes", []byte{0, 0, 1, 0x65, 9, 0, 0, 1, 0x41}, [][]byte{{0x65, 9}, {0x41}}},
		{"no start code", []byte{1, 2, 3}, nil},
		{"round trip", appendAnnexB(nil, [][]byte{{0x67, 0}, {0x68}, {}, {0x65, 1, 2, 3}}), [][]byte{{0x67, 0}, {0x68}, {0x65, 1, 2, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := splitAnnexB(tc.in)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d NAL units %x; want %d", len(got), got, len(tc.want))
			}
			for i := range got {
				if !bytes.Equal(got[i], tc.want[i]) {
					t.Fatalf("NAL unit %d = %x; want %x", i, got[i], tc.want[i])
				}
			}
		})
	}
}
