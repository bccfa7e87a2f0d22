package bench

import (
	"testing"
	"time"
)

func TestParseParts(t *testing.T) {
	pl := `#EXTM3U
#EXT-X-PROGRAM-DATE-TIME:2026-11-22T00:42:01.000Z
#EXT-X-PART:DURATION=0.5,URI="a_part1.mp4?x=1",INDEPENDENT=YES
#EXT-X-PART:DURATION=0.5,URI="a_part2.mp4"
#EXTINF:1.00000,
a_seg1.mp4
#EXT-X-PART:DURATION=0.25,URI="a_part3.mp4"
#EXT-X-PRELOAD-HINT:TYPE=PART,URI="a_part4.mp4"
`
	parts := parseParts(pl)
	base := time.Date(2026, 11, 22, 0, 42, 1, 0, time.UTC)
	want := []part{
		{"a_part1.mp4?x=1", base.Add(500 * time.Millisecond)},
		{"a_part2.mp4", base.Add(time.Second)},
		{"a_part3.mp4", base.Add(1250 * time.Millisecond)},
	}
	if len(parts) != len(want) {
		t.Fatalf("got %d parts, want %d: %+v", len(parts), len(want), parts)
	}
	for i := range want {
		if parts[i].uri != want[i].uri || !parts[i].end.Equal(want[i].end) {
			t.Errorf("part %d: %+v, want %+v", i, parts[i], want[i])
		}
	}
}

func TestNextPart(t *testing.T) {
	tests := []struct {
		name      string
		pl        string
		msn, part uint64
		ok        bool
	}{
		{"parts after the last segment", "#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:7\n#EXT-X-PART:DURATION=0.5,URI=\"a\"\n#EXTINF:1,\nseg7.mp4\n#EXTINF:1,\nseg8.mp4\n#EXT-X-PART:DURATION=0.5,URI=\"b\"\n#EXT-X-PART:DURATION=0.5,URI=\"c\"\n", 9, 2, true},
		{"a segment just closed", "#EXT-X-MEDIA-SEQUENCE:3\n#EXT-X-PART:DURATION=0.5,URI=\"a\"\n#EXTINF:1,\nseg3.mp4\n", 4, 0, true},
		{"no media sequence", "#EXTM3U\n#EXTINF:1,\nseg.mp4\n", 0, 0, false},
		{"bad media sequence", "#EXT-X-MEDIA-SEQUENCE:x\n", 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msn, part, ok := nextPart(tc.pl)
			if msn != tc.msn || part != tc.part || ok != tc.ok {
				t.Fatalf("nextPart = %d, %d, %v; want %d, %d, %v", msn, part, ok, tc.msn, tc.part, tc.ok)
			}
		})
	}
}

func FuzzParseParts(f *testing.F) {
	f.Add("#EXT-X-PROGRAM-DATE-TIME:2026-11-22T00:42:01.000Z\n#EXT-X-PART:DURATION=0.5,URI=\"a\"\n#EXTINF:1,\n")
	f.Add("#EXT-X-PART:URI=\"\n")
	f.Fuzz(func(t *testing.T, s string) { _ = parseParts(s) })
}
