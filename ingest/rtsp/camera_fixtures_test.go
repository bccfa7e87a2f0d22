package rtsp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/sdp"

	"github.com/vigia/vigia/ingest"
)

// cameraFixture is a real camera's DESCRIBE answer (testdata/cameras): the
// SDP as the camera sent it, headers of the answer, and what recording it
// must come to.
type cameraFixture struct {
	name   string
	sdp    []byte // lines joined by CRLF, as cameras send them
	header map[string]string
	// expect is "records", "no data" (a read timeout: the camera sends
	// nothing Vigia reads) or the reason of a permanent failure.
	expect string
}

// loadCameraFixtures reads testdata/cameras/*.sdp: comment lines ("# ",
// notes on the camera and its source; "# expect: ", "# header: Name:
// value" with {url} for the camera's URL), a blank line, the SDP.
func loadCameraFixtures(t testing.TB) []cameraFixture {
	t.Helper()
	files, err := filepath.Glob("testdata/cameras/*.sdp")
	if err != nil || len(files) == 0 {
		t.Fatalf("no camera fixtures: %v", err)
	}
	var out []cameraFixture
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fx := cameraFixture{name: strings.TrimSuffix(filepath.Base(f), ".sdp"), header: map[string]string{}}
		notes, body, ok := bytes.Cut(b, []byte("\n\n"))
		if !ok {
			t.Fatalf("%s: no blank line between the notes and the SDP", f)
		}
		sc := bufio.NewScanner(bytes.NewReader(notes))
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "# expect: "):
				fx.expect = strings.TrimPrefix(line, "# expect: ")
			case strings.HasPrefix(line, "# header: "):
				k, v, _ := strings.Cut(strings.TrimPrefix(line, "# header: "), ": ")
				fx.header[k] = v
			case !strings.HasPrefix(line, "#"):
				t.Fatalf("%s: %q among the notes", f, line)
			}
		}
		if fx.expect == "" {
			t.Fatalf("%s: no expect line", f)
		}
		fx.sdp = []byte(strings.ReplaceAll(strings.TrimRight(string(body), "\n"), "\n", "\r\n") + "\r\n")
		out = append(out, fx)
	}
	return out
}

// videoSent returns the codec and payload type of the video the camera
// sends: its first video media's first format (what a camera offering
// several formats in one media sends), and false when that is neither
// H.264 nor H.265 or the SDP does not parse.
func (fx cameraFixture) videoSent() (h265 bool, pt uint8, ok bool) {
	var s sdp.SessionDescription
	if s.Unmarshal(fx.sdp) != nil {
		return false, 0, false
	}
	d, err := lenientDescription(&s)
	if err != nil {
		return false, 0, false
	}
	for _, m := range d.Medias {
		if m.Type != description.MediaTypeVideo || len(m.Formats) == 0 {
			continue
		}
		switch f := m.Formats[0].(type) {
		case *format.H264:
			return false, f.PayloadTyp, true
		case *format.H265:
			return true, f.PayloadTyp, true
		}
		return false, m.Formats[0].PayloadType(), true
	}
	return false, 0, false
}

// TestCameraFixtures replays each real camera's DESCRIBE answer
// (testdata/cameras) to the session, and a stream after PLAY in the
// camera's video codec and payload type: every one records, or fails
// with a clear, classified error (a permanent failure with its reason, or
// the read timeout for a camera that sends nothing Vigia reads); none
// hangs or panics.
func TestCameraFixtures(t *testing.T) {
	for _, fx := range loadCameraFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			cam := newScriptedCamera(t)
			cam.describe = fx.sdp
			cam.describeHeader = base.Header{}
			for k, v := range fx.header {
				cam.describeHeader[k] = base.HeaderValue{strings.ReplaceAll(v, "{url}", cam.url())}
			}
			h265, pt, ok := fx.videoSent()
			cam.h265, cam.videoPT, cam.stream = h265, pt, ok
			cam.start()
			s := scriptedSource(cam, time.Second)
			sink := &unitSink{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx, sink) }()

			switch fx.expect {
			case "records":
				deadline := time.After(20 * time.Second)
				for len(sink.byTrack(0)) < 5 {
					select {
					case err := <-done:
						t.Fatalf("run ended with %v after %d video units, want it to record", err, len(sink.byTrack(0)))
					case <-deadline:
						t.Fatalf("%d video units in 20 s, want it to record", len(sink.byTrack(0)))
					case <-time.After(20 * time.Millisecond):
					}
				}
				cancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Errorf("run ended with %v once stopped", err)
				}
			default:
				var err error
				select {
				case err = <-done:
				case <-time.After(20 * time.Second):
					t.Fatal("run still going after 20 s: a hang, not a clear failure")
				}
				if n := len(sink.byTrack(0)); n > 0 {
					t.Errorf("%d video units from a camera that should not record", n)
				}
				if fx.expect == "no data" {
					if !errors.Is(err, ingest.ErrReadTimeout) {
						t.Errorf("run ended with %v, want %v", err, ingest.ErrReadTimeout)
					}
					return
				}
				pe, perm := ingest.IsPermanent(err)
				if !perm || pe.Reason != fx.expect {
					t.Errorf("run ended with %v, want a permanent failure %q", err, fx.expect)
				}
			}
		})
	}
}
