//go:build cgo

package thumbs

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/synth"
)

// recordSegment writes the 360p H.264 fixture (15 fps, 4 s) with its AAC
// through the segmenter and returns the stored segment file.
func recordSegment(t *testing.T, start time.Time) []byte {
	t.Helper()
	clip, err := synth.Fixture(synth.CodecH264, true)
	if err != nil {
		t.Fatal(err)
	}
	aclip, err := synth.AudioFixture()
	if err != nil {
		t.Fatal(err)
	}
	var stored [][]byte
	sp, err := segmenter.NewSpool(segmenter.SpoolConfig{
		Dir: t.TempDir(),
		Upload: func(_ context.Context, _ segmenter.Segment, body io.ReadSeeker) error {
			b, err := io.ReadAll(body)
			stored = append(stored, b)
			return err
		},
		Workers: 1,
		Log:     zap.NewNop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	w := segmenter.NewWriter(segmenter.WriterConfig{Camera: "cam", Spool: sp, Log: zap.NewNop()})
	vt, at := clip.Track(), aclip.Track()
	if err := w.SetTracks([]*media.Track{&vt, &at}); err != nil {
		t.Fatal(err)
	}
	aframe := aclip.Duration() / time.Duration(len(aclip.Units))
	ai := 0
	for i, u := range clip.Units {
		d := time.Duration(i) * time.Second / 15
		for ; time.Duration(ai)*aframe <= d; ai++ {
			a := aclip.Units[ai%len(aclip.Units)]
			a.Track, a.DTS, a.PTS, a.Time = 1, time.Duration(ai)*aframe, time.Duration(ai)*aframe, start.Add(time.Duration(ai)*aframe)
			if err := w.WriteUnit(&a); err != nil {
				t.Fatal(err)
			}
		}
		u.Track, u.DTS, u.PTS, u.Time = 0, d, d, start.Add(d)
		if err := w.WriteUnit(&u); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := sp.Drain(ctx); err != nil || len(stored) != 1 {
		t.Fatalf("%d segments stored: %v", len(stored), err)
	}
	return stored[0]
}

// TestFrameAtRecordedSegment decodes frames from a segment as the
// segmenter stores it (fragments with a free box between moof and mdat).
func TestFrameAtRecordedSegment(t *testing.T) {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	seg := recordSegment(t, start)
	if !bytes.Contains(seg, []byte("free")) {
		t.Fatal("segment has no free box: not the layout under test")
	}
	dec := testDecoder(t)
	for _, n := range []int{0, 22, 59} { // a keyframe, mid-GOP, the last frame
		want := start.Add(time.Duration(n) * time.Second / 15)
		img, ft, err := FrameAt(context.Background(), dec, seg, start, want.Add(20*time.Millisecond), 0)
		if err != nil {
			t.Fatalf("frame %d: %v", n, err)
		}
		// Frame times are 90 kHz ticks: within a millisecond of the frame's.
		if ft.Sub(want).Abs() > time.Millisecond || img.Rect.Dx() != 640 || img.Rect.Dy() != 360 {
			t.Fatalf("frame %d: %s %v, want %s 640x360", n, ft, img.Rect, want)
		}
	}
}
