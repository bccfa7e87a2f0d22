package synth

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"

	"github.com/vigia/vigia/testenv"
)

// matchUnit returns the index of the fixture unit equal to au, or -1.
func matchUnit(clip *Clip, au [][]byte) int {
	for i, u := range clip.Units {
		if len(u.NALUs) != len(au) {
			continue
		}
		same := true
		for j := range au {
			if !bytes.Equal(u.NALUs[j], au[j]) {
				same = false
				break
			}
		}
		if same {
			return i
		}
	}
	return -1
}

func TestServePlay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		spec          CameraSpec
		width, height int
	}{
		{"h264", CameraSpec{Path: "a", Codec: CodecH264}, 1280, 720},
		{"h265", CameraSpec{Path: "b", Codec: CodecH265}, 1280, 720},
		{"h264 audio", CameraSpec{Path: "c", Codec: CodecH264, Audio: true}, 1280, 720},
		{"h265 small audio", CameraSpec{Path: "d/e", Codec: CodecH265, Small: true, Audio: true}, 640, 360},
		{"default codec", CameraSpec{Path: "/f"}, 1280, 720},
	}
	specs := make([]CameraSpec, len(cases))
	for i, tc := range cases {
		specs[i] = tc.spec
	}
	s := startServer(t, specs...)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := dialReader(s.URL(tc.spec.Path), "", "", false)
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer r.close()

			// SDP: parameter sets give the expected size.
			codec := tc.spec.Codec
			var sps []byte
			switch f := r.videoMedia.Formats[0].(type) {
			case *format.H264:
				sps = f.SPS
				if codec == "" {
					codec = CodecH264
				}
				if codec != CodecH264 {
					t.Fatalf("SDP has H264, want %s", codec)
				}
			case *format.H265:
				sps = f.SPS
				if codec != CodecH265 || f.VPS == nil {
					t.Fatalf("SDP has H265 (VPS %d bytes), want %s", len(f.VPS), codec)
				}
			}
			vc, _ := codecByName(codec)
			w, h, _, err := vc.size(sps)
			if err != nil || w != tc.width || h != tc.height {
				t.Fatalf("SDP SPS: %dx%d (%v), want %dx%d", w, h, err, tc.width, tc.height)
			}
			if tc.spec.Audio != (r.audioMedia != nil) {
				t.Fatalf("audio track present %v, want %v", r.audioMedia != nil, tc.spec.Audio)
			}

			// Media: 20 consecutive fixture units after the first keyframe,
			// with timestamps one frame apart.
			clip, err := Fixture(codec, tc.spec.Small)
			if err != nil {
				t.Fatal(err)
			}
			testenv.WaitFor(t, 20*time.Second, "a keyframe and 20 units", func() bool {
				aus := r.videoUnits()
				for i, au := range aus {
					if k := matchUnit(clip, au.nalus); k >= 0 && clip.Units[k].Key {
						return len(aus)-i >= 20
					}
				}
				return false
			})
			aus := r.videoUnits()
			first := -1
			for i, au := range aus {
				if k := matchUnit(clip, au.nalus); k >= 0 && clip.Units[k].Key {
					first = i
					break
				}
			}
			want := matchUnit(clip, aus[first].nalus)
			if got := countType(vc, aus[first].nalus, vc.sps); got != 1 {
				t.Errorf("keyframe carries %d SPS in-band, want 1", got)
			}
			for i := first; i < len(aus); i++ {
				if k := matchUnit(clip, aus[i].nalus); k != want {
					t.Fatalf("unit %d is fixture unit %d, want %d", i, k, want)
				}
				want = (want + 1) % len(clip.Units)
				if i > first {
					if d := aus[i].pts - aus[i-1].pts; d != 6000 {
						t.Fatalf("unit %d: PTS step %d, want 6000 (1/15 s at 90 kHz)", i, d)
					}
				}
			}

			if tc.spec.Audio {
				testenv.WaitFor(t, 10*time.Second, "audio frames", func() bool {
					_, a, _, _ := r.counts()
					return a >= 10
				})
				r.mu.Lock()
				pts := append([]int64(nil), r.audioPTS...)
				r.mu.Unlock()
				for i := 1; i < len(pts); i++ {
					if d := pts[i] - pts[i-1]; d != 1024 {
						t.Fatalf("audio frame %d: PTS step %d, want 1024", i, d)
					}
				}
			}
			if _, _, errs, _ := r.counts(); errs != 0 {
				t.Errorf("%d decode errors", errs)
			}
			if n, err := s.FrameCount(tc.spec.Path); err != nil || n < 20 {
				t.Errorf("FrameCount = %d, %v; want >= 20", n, err)
			}
		})
	}
}

func countType(vc *videoCodec, au [][]byte, typ int) int {
	n := 0
	for _, nalu := range au {
		if vc.naluType(nalu) == typ {
			n++
		}
	}
	return n
}

func TestAuth(t *testing.T) {
	t.Parallel()
	s := startServer(t, CameraSpec{Path: "locked", User: "admin", Pass: "s3cret"})
	cases := []struct {
		name       string
		user, pass string
		wantCode   base.StatusCode
	}{
		{"no credentials", "", "", base.StatusUnauthorized},
		{"wrong password", "admin", "nope", base.StatusUnauthorized},
		{"wrong user", "root", "s3cret", base.StatusUnauthorized},
		{"right credentials", "admin", "s3cret", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := dialReader(s.URL("locked"), tc.user, tc.pass, false)
			if tc.wantCode == 0 {
				if err != nil {
					t.Fatalf("dial: %v", err)
				}
				r.close()
				return
			}
			if err == nil {
				r.close()
				t.Fatalf("dial succeeded, want status %d", tc.wantCode)
			}
			if got := statusCode(err); got != tc.wantCode {
				t.Fatalf("error %v (status %d), want status %d", err, got, tc.wantCode)
			}
		})
	}
}

func TestUnknownPath(t *testing.T) {
	t.Parallel()
	s := startServer(t, CameraSpec{Path: "cam"})
	for _, path := range []string{"nope", "cam/extra", ""} {
		_, err := dialReader(s.URL(path), "", "", false)
		if got := statusCode(err); got != base.StatusNotFound {
			t.Errorf("path %q: error %v (status %d), want 404", path, err, got)
		}
	}
}

func TestAddRemoveCamera(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	if err := s.AddCamera(CameraSpec{Path: "late", Codec: CodecH265}); err != nil {
		t.Fatalf("add: %v", err)
	}
	if err := s.AddCamera(CameraSpec{Path: "late"}); !errors.Is(err, ErrCameraExists) {
		t.Fatalf("second add: %v, want ErrCameraExists", err)
	}
	if err := s.AddCamera(CameraSpec{Path: "x", Codec: "mjpeg"}); !errors.Is(err, ErrUnknownCodec) {
		t.Fatalf("add mjpeg: %v, want ErrUnknownCodec", err)
	}
	r, err := dialReader(s.URL("late"), "", "", false)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer r.close()
	testenv.WaitFor(t, 10*time.Second, "reader counted", func() bool {
		n, _ := s.Readers("late")
		return n == 1
	})
	if err := s.RemoveCamera("late"); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if err := r.c.Wait(); err == nil {
		t.Fatal("client session survived RemoveCamera")
	}
	if _, err := dialReader(s.URL("late"), "", "", false); statusCode(err) != base.StatusNotFound {
		t.Fatalf("dial removed camera: %v, want 404", err)
	}
	if err := s.RemoveCamera("late"); !errors.Is(err, ErrNoCamera) {
		t.Fatalf("second remove: %v, want ErrNoCamera", err)
	}
}

// TestSenderReports: a camera sends a sender report of each track with its
// first frame and every 5 s after, and only those (not gortsplib's, whose
// NTP time v4.16.2 gets wrong by up to 0.77 s, every 10 s); each report's
// NTP time is the wall clock of its RTP time.
func TestSenderReports(t *testing.T) {
	t.Parallel()
	s := startServer(t, CameraSpec{Path: "sr", Audio: true})
	r, err := dialReader(s.URL("sr"), "", "", false)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer r.close()
	// Four of each track: 15 s, past the 10 s of gortsplib's own.
	perTrack := func() map[*description.Media][]receivedReport {
		m := map[*description.Media][]receivedReport{}
		for _, sr := range r.senderReports() {
			m[sr.media] = append(m[sr.media], sr)
		}
		return m
	}
	testenv.WaitFor(t, 40*time.Second, "four sender reports of each track", func() bool {
		m := perTrack()
		return len(m[r.videoMedia]) >= 4 && len(m[r.audioMedia]) >= 4
	})
	for media, srs := range perTrack() {
		for i, sr := range srs {
			// The report is sent right after its frame, due at its NTP time.
			if d := sr.arrived.Sub(sr.ntp); d < -50*time.Millisecond || d > 2*time.Second {
				t.Errorf("%s report %d: NTP time %s, arrived %s", media.Type, i, sr.ntp.Format("15:04:05.000"), sr.arrived.Format("15:04:05.000"))
			}
			if i > 0 {
				if d := sr.ntp.Sub(srs[i-1].ntp); d < 4900*time.Millisecond || d > 6*time.Second {
					t.Errorf("%s report %d: %v after the one before, want 5 s", media.Type, i, d)
				}
			}
		}
	}
}
