package synth

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestFixture(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		codec         string
		small         bool
		width, height int
	}{
		{"h264 720p", CodecH264, false, 1280, 720},
		{"h264 360p", CodecH264, true, 640, 360},
		{"h265 720p", CodecH265, false, 1280, 720},
		{"h265 360p", CodecH265, true, 640, 360},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Fixture(tc.codec, tc.small)
			if err != nil {
				t.Fatal(err)
			}
			if c.Width != tc.width || c.Height != tc.height || c.FPS != 15 {
				t.Fatalf("%dx%d at %v fps, want %dx%d at 15", c.Width, c.Height, c.FPS, tc.width, tc.height)
			}
			if len(c.Units) != 60 || c.GOP() != 30 || c.Duration() != 4*time.Second {
				t.Fatalf("%d units, GOP %d, %v; want 60, 30, 4s", len(c.Units), c.GOP(), c.Duration())
			}
			if c.Units[15].PTS != time.Second || c.Units[15].DTS != time.Second {
				t.Fatalf("unit 15 at PTS %v DTS %v, want 1s", c.Units[15].PTS, c.Units[15].DTS)
			}
			vc, _ := codecByName(tc.codec)
			if tr := c.Track(); tr.Codec != vc.media || tr.ClockRate != 90000 || !bytes.Equal(tr.SPS, c.SPS) {
				t.Fatalf("track %+v", tr)
			}
			for i, u := range c.Units {
				if want := i%30 == 0; u.Key != want {
					t.Fatalf("unit %d key %v, want %v", i, u.Key, want)
				}
				for _, n := range u.NALUs {
					if typ := vc.naluType(n); typ == vc.aud || typ == vc.filler {
						t.Fatalf("unit %d keeps NAL type %d", i, typ)
					}
				}
				if u.Key {
					if countType(vc, u.NALUs, vc.sps) != 1 || countType(vc, u.NALUs, vc.pps) != 1 {
						t.Fatalf("keyframe %d lacks in-band SPS/PPS", i)
					}
					if vc.vps >= 0 && countType(vc, u.NALUs, vc.vps) != 1 {
						t.Fatalf("keyframe %d lacks in-band VPS", i)
					}
				}
				pays := c.packets[i]
				if len(pays) == 0 || !pays[len(pays)-1].marker {
					t.Fatalf("unit %d: %d packets, marker on last missing", i, len(pays))
				}
			}
		})
	}
	if _, err := Fixture("mjpeg", false); !errors.Is(err, ErrUnknownCodec) {
		t.Fatalf("Fixture(mjpeg) = %v, want ErrUnknownCodec", err)
	}
}

func TestAudioFixture(t *testing.T) {
	t.Parallel()
	a, err := AudioFixture()
	if err != nil {
		t.Fatal(err)
	}
	if a.SampleRate() != 16000 || a.Config.ChannelConfig != 1 || a.Config.Type != 2 {
		t.Fatalf("config %+v, want AAC-LC 16 kHz mono", a.Config)
	}
	if len(a.Units) < 60 || a.Units[1].PTS != 64*time.Millisecond {
		t.Fatalf("%d units, unit 1 at %v; want >= 60, 64ms", len(a.Units), a.Units[1].PTS)
	}
	if tr := a.Track(); tr.ClockRate != 16000 || tr.AAC != a.Config {
		t.Fatalf("track %+v", tr)
	}
	for i, p := range a.packets {
		if len(p) != 1 {
			t.Fatalf("frame %d in %d packets, want 1", i, len(p))
		}
	}
}

func TestSplitNALUs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   []byte
		want [][]byte
	}{
		{"empty", nil, nil},
		{"no start code", []byte{1, 2, 3}, nil},
		{"3-byte", []byte{0, 0, 1, 9, 0xf0, 0, 0, 1, 0x65, 1}, [][]byte{{9, 0xf0}, {0x65, 1}}},
		{"4-byte", []byte{0, 0, 0, 1, 9, 0xf0, 0, 0, 0, 1, 0x41, 2}, [][]byte{{9, 0xf0}, {0x41, 2}}},
		{"leading garbage", []byte{7, 7, 0, 0, 1, 0x41}, [][]byte{{0x41}}},
		{"trailing zeros", []byte{0, 0, 1, 0x41, 5, 0, 0}, [][]byte{{0x41, 5}}},
		{"empty nalu skipped", []byte{0, 0, 1, 0, 0, 1, 0x41}, [][]byte{{0x41}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := splitNALUs(tc.in)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d NALUs %x, want %x", len(got), got, tc.want)
			}
			for i := range got {
				if !bytes.Equal(got[i], tc.want[i]) {
					t.Fatalf("NALU %d = %x, want %x", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestSplitAccessUnits(t *testing.T) {
	t.Parallel()
	aud := []byte{9, 0xf0}
	filler := []byte{12, 0xff}
	idr := []byte{0x65, 1}
	p := []byte{0x41, 2}
	cases := []struct {
		name string
		in   [][]byte
		want int // access units
	}{
		{"none", nil, 0},
		{"aud only", [][]byte{aud, aud}, 0},
		{"two units", [][]byte{aud, idr, aud, p}, 2},
		{"data before first aud", [][]byte{idr, aud, p}, 2},
		{"filler dropped", [][]byte{aud, filler, aud, p, filler}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := splitAccessUnits(tc.in, h264Codec)
			if len(got) != tc.want {
				t.Fatalf("got %d units, want %d", len(got), tc.want)
			}
			for _, au := range got {
				for _, n := range au {
					if typ := h264Codec.naluType(n); typ == 9 || typ == 12 {
						t.Fatalf("unit keeps NAL type %d", typ)
					}
				}
			}
		})
	}
}

func TestParseClipErrors(t *testing.T) {
	t.Parallel()
	good, err := fixtureFS.ReadFile("fixtures/h264_360p.h264")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		codec string
		data  []byte
		want  error
	}{
		{"empty", CodecH264, nil, ErrBadClip},
		{"no parameter sets", CodecH264, []byte{0, 0, 1, 9, 0xf0, 0, 0, 1, 0x65, 0x88}, ErrBadClip},
		{"bad sps", CodecH264, []byte{0, 0, 1, 0x67, 0xff, 0, 0, 1, 0x68, 1, 0, 0, 1, 0x65, 1}, ErrBadClip},
		{"h264 parsed as h265", CodecH265, good, ErrBadClip},
		{"unknown codec", "vp8", good, ErrUnknownCodec},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseClip(tc.codec, tc.data); !errors.Is(err, tc.want) {
				t.Fatalf("parseClip = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := parseAudioClip([]byte{0xff, 0xf1, 0, 0}); !errors.Is(err, ErrBadClip) {
		t.Fatalf("parseAudioClip(short) = %v, want ErrBadClip", err)
	}
}

func FuzzParseClip(f *testing.F) {
	good, err := fixtureFS.ReadFile("fixtures/h264_360p.h264")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(true, good[:4096])
	f.Add(false, good[:4096])
	f.Add(true, []byte{0, 0, 1, 9, 0xf0, 0, 0, 1, 0x65, 0x88})
	f.Add(true, []byte{0, 0, 1, 0x67, 0xff, 0, 0, 1, 0x68, 1, 0, 0, 1, 0x65, 1})
	f.Fuzz(func(t *testing.T, h264 bool, data []byte) {
		codec := CodecH265
		if h264 {
			codec = CodecH264
		}
		c, err := parseClip(codec, data)
		if err != nil {
			return
		}
		if len(c.Units) == 0 || !c.Units[0].Key || len(c.packets) != len(c.Units) || c.FPS <= 0 {
			t.Fatalf("accepted clip breaks invariants: %d units, fps %v", len(c.Units), c.FPS)
		}
	})
}
