package player

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigia/vigia/catalogue"
)

func seg(uri string, start, dur int64) playlistSegment {
	return playlistSegment{URI: uri, StartMs: start, DurationMs: dur, Size: 10_000, InitSize: 800}
}

// writePlaylist writes segs, in the order given, to a playlist of
// [from, to) with the target duration targetMs, and returns what was
// written.
func writePlaylist(segs []playlistSegment, from, to, targetMs int64) (string, error) {
	var b strings.Builder
	pw, err := newPlaylistWriter(&b, from, to, targetMs)
	if err != nil {
		return "", err
	}
	for _, s := range segs {
		if _, err := pw.add(s); err != nil {
			return b.String(), err
		}
	}
	err = pw.close()
	return b.String(), err
}

func TestPlaylist(t *testing.T) {
	const t0 = 1_700_000_000_000
	got, err := writePlaylist([]playlistSegment{
		seg("https://s/early.mp4", t0-60_000, 5_000), // before the range
		seg("https://s/a.mp4?sig=1", t0, 6_000),
		seg("https://s/b.mp4?sig=2", t0+6_001, 6_500),                                    // touches a (1 ms rounding)
		seg("https://s/x.mp4", t0+7_000, 2_000),                                          // overlaps b: left out
		{URI: "https://s/noinit.mp4", StartMs: t0 + 15_000, DurationMs: 1000, Size: 100}, // no init size
		seg("https://s/long.mp4", t0+16_000, 10_001),                                     // longer than the target: left out
		seg("https://s/c.mp4?sig=3", t0+20_000, 10_000),                                  // after a gap
		seg("https://s/late.mp4", t0+60_000, 5_000),                                      // after the range
	}, t0+2_500, t0+30_000, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	want := `#EXTM3U
#EXT-X-VERSION:7
#EXT-X-TARGETDURATION:10
#EXT-X-MEDIA-SEQUENCE:0
#EXT-X-PLAYLIST-TYPE:VOD
#EXT-X-INDEPENDENT-SEGMENTS
#EXT-X-START:TIME-OFFSET=2.500,PRECISE=YES
#EXT-X-MAP:URI="https://s/a.mp4?sig=1",BYTERANGE="800@0"
#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:20.000Z
#EXTINF:6.000,
#EXT-X-BYTERANGE:9200@800
https://s/a.mp4?sig=1
#EXT-X-DISCONTINUITY
#EXT-X-MAP:URI="https://s/b.mp4?sig=2",BYTERANGE="800@0"
#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:26.001Z
#EXTINF:6.500,
#EXT-X-BYTERANGE:9200@800
https://s/b.mp4?sig=2
#EXT-X-DISCONTINUITY
#EXT-X-MAP:URI="https://s/c.mp4?sig=3",BYTERANGE="800@0"
#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:40.000Z
#EXTINF:10.000,
#EXT-X-BYTERANGE:9200@800
https://s/c.mp4?sig=3
#EXT-X-ENDLIST
`
	if got != want {
		t.Errorf("playlist:\n%s\nwant:\n%s", got, want)
	}
}

func TestPlaylistErrors(t *testing.T) {
	const t0 = 1_700_000_000_000
	tests := []struct {
		name     string
		segs     []playlistSegment
		from, to int64
		want     error
	}{
		{"empty range", []playlistSegment{seg("a", t0, 1000)}, t0, t0, catalogue.ErrInvalidRange},
		{"reversed range", []playlistSegment{seg("a", t0, 1000)}, t0 + 5, t0, catalogue.ErrInvalidRange},
		{"nothing stored", nil, t0, t0 + 1000, errNoSegments},
		{"segment ends at from", []playlistSegment{seg("a", t0, 1000)}, t0 + 1000, t0 + 2000, errNoSegments},
		{"segment starts at to", []playlistSegment{seg("a", t0+2000, 1000)}, t0 + 1000, t0 + 2000, errNoSegments},
		{"quote in URI", []playlistSegment{seg(`a"b`, t0, 1000)}, t0, t0 + 1000, errNoSegments},
		{"newline in URI", []playlistSegment{seg("a\n#EXT-X-ENDLIST", t0, 1000)}, t0, t0 + 1000, errNoSegments},
		{"tag as URI", []playlistSegment{seg("#EXTINF", t0, 1000)}, t0, t0 + 1000, errNoSegments},
		{"no duration", []playlistSegment{seg("a", t0, 0)}, t0 - 10, t0 + 1000, errNoSegments},
		{"init covers the file", []playlistSegment{{URI: "a", StartMs: t0, DurationMs: 1000, Size: 800, InitSize: 800}}, t0, t0 + 1000, errNoSegments},
		{"longer than the target", []playlistSegment{seg("a", t0, 2001)}, t0, t0 + 1000, errNoSegments},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := writePlaylist(tt.segs, tt.from, tt.to, 2000)
			if !errors.Is(err, tt.want) || out != "" {
				t.Errorf("error %v, %q written, want %v and nothing", err, out, tt.want)
			}
		})
	}
}

func TestPlaylistTarget(t *testing.T) {
	const t0 = 1_700_000_000_000
	got, err := writePlaylist([]playlistSegment{seg("a", t0, 1500)}, t0-60_000, t0+60_000, 1500)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "EXT-X-START") {
		t.Errorf("EXT-X-START in a playlist starting after from:\n%s", got)
	}
	if !strings.Contains(got, "#EXT-X-TARGETDURATION:2\n") {
		t.Errorf("target duration is not rounded up to seconds:\n%s", got)
	}
}

// FuzzPlaylist checks that whatever the segments, the playlist has one
// URI line per EXTINF, no line that is not a tag or a given URI, and ends
// with EXT-X-ENDLIST; or that nothing is written.
func FuzzPlaylist(f *testing.F) {
	f.Add("a.mp4", int64(1_700_000_000_000), int64(6000), int64(9000), int64(700), "b\n#X", int64(1_700_000_006_000), int64(100), int64(0), int64(1_700_000_010_000))
	f.Add("", int64(0), int64(-1), int64(1), int64(1), `"`, int64(-5), int64(1<<62), int64(-1<<62), int64(1<<62))
	f.Fuzz(func(t *testing.T, u1 string, s1, d1, size1, init1 int64, u2 string, s2, d2, from, to int64) {
		segs := []playlistSegment{
			{URI: u1, StartMs: s1, DurationMs: d1, Size: size1, InitSize: init1},
			{URI: u2, StartMs: s2, DurationMs: d2, Size: size1 * 2, InitSize: init1},
		}
		out, err := writePlaylist(segs, from, to, max(d1, d2))
		if err != nil {
			if !errors.Is(err, errNoSegments) && !errors.Is(err, catalogue.ErrInvalidRange) {
				t.Fatalf("unexpected error %v", err)
			}
			if out != "" {
				t.Fatalf("error %v after writing\n%s", err, out)
			}
			return
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		uris, infs := 0, 0
		for _, l := range lines {
			switch {
			case strings.HasPrefix(l, "#EXTINF:"):
				infs++
			case strings.HasPrefix(l, "#"):
			case l == u1 || l == u2:
				uris++
			default:
				t.Fatalf("stray line %q in\n%s", l, out)
			}
		}
		if uris != infs || uris == 0 || lines[len(lines)-1] != "#EXT-X-ENDLIST" {
			t.Fatalf("%d URIs for %d EXTINF:\n%s", uris, infs, out)
		}
	})
}

// TestPlaylistRendition: a segment with an InitURI (an H.264 rendition)
// is written with its init part and fragments at their own addresses,
// without byte ranges.
func TestPlaylistRendition(t *testing.T) {
	s := seg("https://s/media", 1000, 2000)
	s.InitURI = "https://s/init"
	out, err := writePlaylist([]playlistSegment{s}, 1000, 3000, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "#EXT-X-MAP:URI=\"https://s/init\"\n") || strings.Contains(out, "BYTERANGE") ||
		!strings.Contains(out, "\nhttps://s/media\n") {
		t.Fatalf("playlist:\n%s", out)
	}
}
