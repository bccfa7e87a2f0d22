package synth

import (
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/base"

	"github.com/vigia/vigia/testenv"
)

// waitClosed waits for the reader's session to end and returns its error.
func waitClosed(t *testing.T, r *testReader) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.c.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("client session still open after 10 s")
		return nil
	}
}

func dialPlaying(t *testing.T, s *Server, path string, keep bool) *testReader {
	t.Helper()
	r, err := dialReader(s.URL(path), "", "", keep)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	t.Cleanup(r.close)
	testenv.WaitFor(t, 10*time.Second, "first units", func() bool {
		n, _, _, _ := r.counts()
		return n >= 2
	})
	return r
}

func TestDrop(t *testing.T) {
	t.Parallel()
	s := startServer(t, CameraSpec{Path: "cam"})
	r := dialPlaying(t, s, "cam", false)
	if err := s.Drop("cam"); err != nil {
		t.Fatalf("drop: %v", err)
	}
	if err := waitClosed(t, r); err == nil {
		t.Fatal("session ended without error")
	}
	testenv.WaitFor(t, 10*time.Second, "no readers", func() bool {
		n, _ := s.Readers("cam")
		return n == 0
	})
	dialPlaying(t, s, "cam", false) // the camera stays up
	if err := s.Drop("nope"); err == nil {
		t.Fatal("drop of unknown path succeeded")
	}
}

func TestSetDown(t *testing.T) {
	t.Parallel()
	s := startServer(t, CameraSpec{Path: "cam"})
	r := dialPlaying(t, s, "cam", false)
	if err := s.SetDown("cam", true); err != nil {
		t.Fatalf("set down: %v", err)
	}
	if err := waitClosed(t, r); err == nil {
		t.Fatal("session ended without error")
	}
	if _, err := dialReader(s.URL("cam"), "", "", false); statusCode(err) != base.StatusNotFound {
		t.Fatalf("dial while down: %v, want 404", err)
	}
	if err := s.SetDown("cam", false); err != nil {
		t.Fatalf("set up: %v", err)
	}
	dialPlaying(t, s, "cam", false)
}

func TestWraparound(t *testing.T) {
	t.Parallel()
	// 0.5 s of media before the 32-bit RTP timestamp wraps.
	s := startServer(t, CameraSpec{Path: "wrap", InitialRTPTime: 1<<32 - 45000, Audio: true})
	r := dialPlaying(t, s, "wrap", false)
	var aus []videoAU
	testenv.WaitFor(t, 20*time.Second, "units after the wrap", func() bool {
		aus = r.videoUnits()
		for i := 1; i < len(aus); i++ {
			if aus[i].ts < aus[i-1].ts {
				return len(aus)-i >= 10
			}
		}
		return false
	})
	for i := 1; i < len(aus); i++ {
		if d := aus[i].pts - aus[i-1].pts; d != 6000 {
			t.Fatalf("unit %d (rtp %d after %d): PTS step %d, want 6000", i, aus[i].ts, aus[i-1].ts, d)
		}
	}
	testenv.WaitFor(t, 10*time.Second, "audio", func() bool {
		_, a, _, _ := r.counts()
		return a > 0
	})
}

func TestJumpTimestamps(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		delta time.Duration
	}{
		{"forward 10s", 10 * time.Second},
		{"back 5s", -5 * time.Second},
	}
	s := startServer(t, CameraSpec{Path: "fwd"}, CameraSpec{Path: "back"})
	paths := []string{"fwd", "back"}
	for i, tc := range cases {
		path := paths[i]
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := dialPlaying(t, s, path, false)
			if err := s.JumpTimestamps(path, tc.delta); err != nil {
				t.Fatalf("jump: %v", err)
			}
			want := int32(6000 + tc.delta.Milliseconds()*90)
			testenv.WaitFor(t, 10*time.Second, "a timestamp step of the jump", func() bool {
				aus := r.videoUnits()
				for i := 1; i < len(aus); i++ {
					if int32(aus[i].ts-aus[i-1].ts) == want {
						return true
					}
				}
				return false
			})
		})
	}
}

func TestSetSmall(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		codec string
	}{
		{"h264", CodecH264},
		{"h265", CodecH265},
	}
	s := startServer(t, CameraSpec{Path: CodecH264, Codec: CodecH264}, CameraSpec{Path: CodecH265, Codec: CodecH265})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := dialPlaying(t, s, tc.codec, false)
			small, _ := Fixture(tc.codec, true)
			if err := s.SetSmall(tc.codec, true); err != nil {
				t.Fatalf("set small: %v", err)
			}
			vc, _ := codecByName(tc.codec)
			testenv.WaitFor(t, 10*time.Second, "a 360p keyframe with SPS in-band", func() bool {
				for _, au := range r.videoUnits() {
					for _, n := range au.nalus {
						if vc.naluType(n) != vc.sps {
							continue
						}
						if w, h, _, err := vc.size(n); err == nil && w == 640 && h == 360 {
							return matchUnit(small, au.nalus) == 0
						}
					}
				}
				return false
			})
			// New readers get the 360p parameter sets in the SDP.
			r2, err := dialReader(s.URL(tc.codec), "", "", false)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer r2.close()
			sps := sdpSPS(r2)
			if w, h, _, err := vc.size(sps); err != nil || w != 640 || h != 360 {
				t.Fatalf("SDP after switch: %dx%d (%v), want 640x360", w, h, err)
			}
		})
	}
}

func TestGarbage(t *testing.T) {
	t.Parallel()
	s := startServer(t, CameraSpec{Path: "g"})
	clip, _ := Fixture(CodecH264, false)
	known := make(map[string]bool)
	for _, pays := range clip.packets {
		for _, p := range pays {
			known[string(p.payload)] = true
		}
	}
	r := dialPlaying(t, s, "g", true)
	if err := s.Garbage("g", true); err != nil {
		t.Fatalf("garbage: %v", err)
	}
	var mark int
	testenv.WaitFor(t, 10*time.Second, "foreign payloads", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		foreign := 0
		for _, p := range r.payloads {
			if !known[string(p)] {
				foreign++
			}
		}
		mark = len(r.video)
		return foreign >= 10
	})
	if err := s.Garbage("g", false); err != nil {
		t.Fatalf("garbage off: %v", err)
	}
	testenv.WaitFor(t, 10*time.Second, "fixture units again", func() bool {
		aus := r.videoUnits()
		for _, au := range aus[mark:] {
			if k := matchUnit(clip, au.nalus); k >= 0 {
				return true
			}
		}
		return false
	})
}

func TestStall(t *testing.T) {
	t.Parallel()
	s := startServer(t, CameraSpec{Path: "st"})
	r := dialPlaying(t, s, "st", false)
	if err := s.Stall("st", time.Second); err != nil {
		t.Fatalf("stall: %v", err)
	}
	// Frames due during the stall are skipped, so the next unit shows a
	// timestamp gap of about 15 frames.
	testenv.WaitFor(t, 10*time.Second, "a timestamp gap after the stall", func() bool {
		aus := r.videoUnits()
		for i := 1; i < len(aus); i++ {
			if aus[i].pts-aus[i-1].pts >= 13*6000 {
				return true
			}
		}
		return false
	})
	if n, _ := s.Readers("st"); n != 1 {
		t.Fatalf("readers after stall = %d, want 1 (connection kept)", n)
	}
}
