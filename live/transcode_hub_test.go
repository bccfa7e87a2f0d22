//go:build cgo

package live

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// playH265 feeds camera an H.265 source until the test ends.
func (n *rtcNode) playH265(t *testing.T, camera string) {
	t.Helper()
	c := n.s.Consumer()(camera)
	t.Cleanup(func() { c.Close() })
	src := newSource(t, synth.CodecH265, true)
	c.Tracks(src.tracks())
	play(t, c, src)
}

// TestWebRTCTranscodesH265: viewers offering only H.264 of an H.265 camera
// get H.264 from one transcoder per camera, however many they are; past
// TranscodeMax another camera's viewer gets 503 naming the capacity; the
// transcoder stops when the camera's last viewer leaves. A viewer
// offering H.265 gets it untouched, without a transcoder.
func TestWebRTCTranscodesH265(t *testing.T) {
	t.Parallel()
	n := newRTCNode(t, WebRTCConfig{TranscodeMax: 1})
	n.playH265(t, "cam")
	n.playH265(t, "cam2")
	exp := time.Now().Add(time.Hour)
	testenv.WaitFor(t, 10*time.Second, "the cameras' first units", func() bool {
		return n.s.stream("cam") != nil && n.s.stream("cam").hub.videoCodec() == media.H265 &&
			n.s.stream("cam2") != nil && n.s.stream("cam2").hub.videoCodec() == media.H265
	})

	native := dial(t, n.whepURL("cam", exp), media.H265)
	native.waitFrames(t, 5, 15*time.Second)
	if got := n.w.tc.count(); got != 0 {
		t.Fatalf("%d transcodes for a viewer offering H.265; want 0", got)
	}

	a := dial(t, n.whepURL("cam", exp), media.H264)
	b := dial(t, n.whepURL("cam", exp), media.H264)
	for i, c := range []*rtcClient{a, b} {
		frames := c.waitFrames(t, 10, 20*time.Second)
		key := -1
		for j, f := range frames {
			if len(f) > 0 && f[0][0]&0x1f == 7 {
				key = j
				break
			}
		}
		if key < 0 {
			t.Fatalf("viewer %d: no H.264 keyframe led by its SPS in %d frames", i, len(frames))
		}
	}
	if got := n.w.tc.count(); got != 1 {
		t.Fatalf("%d transcodes for two viewers of one camera; want 1", got)
	}

	_, sdp := offerSDPWith(t, clientAPI(t, media.H264))
	code, _, body := postOffer(t, n.whepURL("cam2", exp), sdp)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "transcode capacity") {
		t.Fatalf("a second camera's H.264 viewer past TranscodeMax: %d %q; want 503 naming the transcode capacity", code, body)
	}

	for _, c := range []*rtcClient{a, b} {
		req, _ := http.NewRequest(http.MethodDelete, n.srv.URL+c.location, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	testenv.WaitFor(t, 10*time.Second, "the transcoder stopping after the last viewer left", func() bool {
		return n.w.tc.count() == 0
	})
	// Room again: the second camera's viewer is served.
	c := dial(t, n.whepURL("cam2", exp), media.H264)
	c.waitFrames(t, 5, 20*time.Second)
}

// TestWebRTCNoTranscode: without TranscodeMax, an H.264-only offer for an
// H.265 camera is refused with 406, as before.
func TestWebRTCNoTranscode(t *testing.T) {
	n := newRTCNode(t, WebRTCConfig{})
	n.playH265(t, "cam")
	testenv.WaitFor(t, 10*time.Second, "the camera's first unit", func() bool {
		return n.s.stream("cam") != nil && n.s.stream("cam").hub.videoCodec() == media.H265
	})
	_, sdp := offerSDPWith(t, clientAPI(t, media.H264))
	if code, _, body := postOffer(t, n.whepURL("cam", time.Now().Add(time.Hour)), sdp); code != http.StatusNotAcceptable {
		t.Fatalf("H.264-only offer for an H.265 camera: %d %q; want 406", code, body)
	}
}
