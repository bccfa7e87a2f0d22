//go:build cgo

package motion

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/segmenter"
)

// newTestWriter returns a segmenter Writer for one H.264 or H.265 track
// (parameter sets from the keyframes) on a spool in a temporary folder.
func newTestWriter(t *testing.T, codec media.Codec, segment time.Duration) *segmenter.Writer {
	t.Helper()
	sp, err := segmenter.NewSpool(segmenter.SpoolConfig{
		Dir:     t.TempDir(),
		Upload:  func(context.Context, segmenter.Segment, io.ReadSeeker) error { return nil },
		Workers: 1,
		Log:     zap.NewNop(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sp.Close)
	w := segmenter.NewWriter(segmenter.WriterConfig{Camera: "cam", SegmentDuration: segment, Spool: sp, Log: zap.NewNop()})
	if err := w.SetTracks([]*media.Track{{Codec: codec}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

// own returns a copy of u whose NAL units are in memory of their own, and
// a function that overwrites that memory with media.PoisonByte, as the
// pipeline's release does under test.
func own(u *media.Unit) (*media.Unit, func()) {
	c := *u
	b := make([]byte, 0, u.Size())
	c.NALUs = nil
	for _, n := range u.NALUs {
		b = append(b, n...)
		c.NALUs = append(c.NALUs, b[len(b)-len(n):len(b):len(b)])
	}
	return &c, func() {
		for i := range b {
			b[i] = media.PoisonByte
		}
	}
}

// feedOverwritten passes each unit through w (when set), then to unit,
// then overwrites the unit's memory, as a pipeline with pooled memory does.
func feedOverwritten(t *testing.T, units []*media.Unit, w *segmenter.Writer, unit func(*media.Unit)) {
	t.Helper()
	for i, u := range units {
		u, poison := own(u)
		if w != nil {
			if err := w.WriteUnit(u); err != nil {
				t.Fatal(err)
			}
			if !u.Stored.Valid() {
				t.Fatalf("unit %d not stored by the segmenter", i)
			}
		}
		unit(u)
		poison()
	}
}

// sameEvents fails unless got and want are the same events, images
// included.
func sameEvents(t *testing.T, got, want []Event, base time.Time) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("the reference run found no event: nothing to compare")
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v (the same as with intact units)", summary(got, base), summary(want, base))
	}
}

// summary describes events for a failure message.
func summary(evs []Event, base time.Time) []string {
	var out []string
	for _, e := range evs {
		out = append(out, fmt.Sprintf("%s %v area %.4f image %d bytes", e.ID, interval{e.Start.Sub(base), e.End.Sub(base)}, e.Area, len(e.Image)))
	}
	return out
}

// TestDetectorOverwrittenUnits: with each unit's memory overwritten as
// soon as Unit returns, the detector finds the same events (times, area,
// image) with the same work as with intact units. "recorded": units go
// through the segmenter first (segments of 10 s end during the clip) and
// the frames a look decodes are read back from the spool file; "not
// recorded": the frames kept are copies.
func TestDetectorOverwrittenUnits(t *testing.T) {
	sc := labelled[0]
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	units := sc.encode(t, base)
	want, ref := runDetector(units, media.H264, DefaultSettings())
	for _, tc := range []struct {
		name     string
		recorded bool
	}{
		{"recorded", true},
		{"not_recorded", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w *segmenter.Writer
			if tc.recorded {
				w = newTestWriter(t, media.H264, 10*time.Second)
			}
			d := NewDetector("cam", DefaultSettings(), testDecoder)
			got := d.SetCodec(media.H264)
			feedOverwritten(t, units, w, func(u *media.Unit) { got = append(got, d.Unit(u)...) })
			got = append(got, d.Close()...)
			sameEvents(t, got, want, base)
			if d.looks != ref.looks || d.decoded != ref.decoded || d.errors != 0 || d.unreadable != 0 {
				t.Fatalf("%d looks, %d decoded, %d errors, %d unreadable; want %d looks, %d decoded, no errors",
					d.looks, d.decoded, d.errors, d.unreadable, ref.looks, ref.decoded)
			}
		})
	}
}

// runService feeds units to a Service's consumer (through w first, when
// set, each unit overwritten once Unit returns) and returns the events
// published and the stats. release, when set, holds the detector back
// until it is closed.
func runService(t *testing.T, units []*media.Unit, w *segmenter.Writer, release chan struct{}) ([]Event, Stats) {
	t.Helper()
	var mu sync.Mutex
	var got []Event
	cfg := Config{Queue: len(units) + 1, Decoder: testDecoder, Publish: func(ev Event) error {
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
		return nil
	}}
	if release != nil {
		cfg.Settings = func(string) Settings { <-release; return DefaultSettings() }
	}
	s := NewService(cfg)
	c := s.Consumer("cam")
	c.Tracks([]*media.Track{{Codec: media.H264}})
	feedOverwritten(t, units, w, c.Unit)
	if release != nil {
		w.Close() // every segment ends before the detector reads anything
		close(release)
	}
	c.Close()
	s.Close()
	return got, s.Stats()
}

// TestServiceOverwrittenUnits: the Service's consumer queues frames, not
// units; with each unit's memory overwritten as soon as Unit returns, the
// events are those of a detector fed intact units.
func TestServiceOverwrittenUnits(t *testing.T) {
	sc := scene{name: "svc", length: 20 * time.Second, size: "640x360", codec: "h264", noise: 5,
		motion: []interval{{sec(8), sec(13)}}}
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	units := sc.encode(t, base)
	want, _ := runDetector(units, media.H264, DefaultSettings())
	for i := range want {
		want[i].ID, want[i].Camera = EventID("cam", want[i].Start), "cam"
	}
	for _, tc := range []struct {
		name     string
		recorded bool
	}{
		{"recorded", true},
		{"not_recorded", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w *segmenter.Writer
			if tc.recorded {
				w = newTestWriter(t, media.H264, time.Hour) // open until the test ends
			}
			got, st := runService(t, units, w, nil)
			sameEvents(t, got, want, base)
			if st.Events != uint64(len(want)) || st.Dropped != 0 || st.Unreadable != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestServiceSegmentEnded: a detector so far behind that the segments of
// the frames it would decode have ended: every look gives up (counted in
// Stats.Unreadable), nothing is decoded from stale or garbage memory, and
// no event is made.
func TestServiceSegmentEnded(t *testing.T) {
	sc := scene{name: "svc", length: 20 * time.Second, size: "640x360", codec: "h264", noise: 5,
		motion: []interval{{sec(8), sec(13)}}}
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	units := sc.encode(t, base)
	got, st := runService(t, units, newTestWriter(t, media.H264, 5*time.Second), make(chan struct{}))
	t.Logf("stats %+v", st)
	if len(got) != 0 || st.Looks == 0 || st.Unreadable < st.Looks || st.Decoded != 0 || st.Dropped != 0 {
		t.Fatalf("events %v, stats %+v; want no event, every look given up unread", intervals(got, base), st)
	}
}
