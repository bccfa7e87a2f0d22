package segmenter

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/synth"
)

// equalNALUs reports whether a and b hold the same NAL units.
func equalNALUs(a, b [][]byte) bool {
	return slices.EqualFunc(a, b, func(x, y []byte) bool { return bytes.Equal(x, y) })
}

// TestWriterStoredReadsBack: every video unit written gets a Stored that
// reads back its NAL units for as long as its segment is open, also after
// the fragment's header region and audio were written around it; once the
// segment ends (cut at a keyframe, or a discontinuity), reads fail with
// os.ErrClosed. A unit the writer drops gets a zero Stored, even when it
// came with one.
func TestWriterStoredReadsBack(t *testing.T) {
	st := newTinyStream(t, 25*4, 40*time.Millisecond, 25, 64*time.Millisecond)
	ds := &dirStore{dir: t.TempDir()}
	sp := newTestSpool(t, t.TempDir(), ds)
	w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: 2 * time.Second, FragmentDuration: 500 * time.Millisecond, Spool: sp, Log: zaptest.NewLogger(t)})
	if err := w.SetTracks(st.tracks); err != nil {
		t.Fatal(err)
	}
	var open, ended []*media.Unit // video units of the open segment, of ended ones
	checkOpen := func(when string) {
		t.Helper()
		for _, u := range open {
			got, err := u.Stored.NALUs()
			if err != nil || !equalNALUs(got, u.NALUs) {
				t.Fatalf("%s: unit at %s reads back %d NAL units, %v", when, u.DTS, len(got), err)
			}
		}
	}
	checkEnded := func(when string) {
		t.Helper()
		for _, u := range ended {
			if got, err := u.Stored.NALUs(); !errors.Is(err, os.ErrClosed) {
				t.Fatalf("%s: unit at %s of an ended segment reads back %d NAL units, %v; want os.ErrClosed", when, u.DTS, len(got), err)
			}
		}
	}
	segments := 0
	for _, u := range st.units {
		if err := w.WriteUnit(u); err != nil {
			t.Fatal(err)
		}
		if u.Track != 0 {
			if u.Stored.Valid() {
				t.Fatalf("audio unit at %s has a Stored", u.DTS)
			}
			continue
		}
		if !u.Stored.Valid() {
			t.Fatalf("video unit at %s written without a Stored", u.DTS)
		}
		if len(open) > 0 && u.Stored.File != open[0].Stored.File {
			if !u.Key {
				t.Fatalf("unit at %s starts a new spool file but is no keyframe", u.DTS)
			}
			ended, open = append(ended, open...), nil
			segments++
		}
		open = append(open, u)
		checkOpen("after unit at " + u.DTS.String())
		checkEnded("after unit at " + u.DTS.String())
	}
	if segments != 1 {
		t.Fatalf("%d segments ended while writing, want 1 (4 s cut at 2 s)", segments)
	}

	w.Discontinuity()
	ended, open = append(ended, open...), nil
	checkEnded("after the discontinuity")

	// A non-key unit after the discontinuity is dropped (no keyframe yet):
	// the Stored it came with is cleared.
	last := st.units[len(st.units)-1]
	if last.Track != 0 {
		last = st.units[len(st.units)-2]
	}
	dropped := *last
	dropped.Key, dropped.DTS = false, last.DTS+40*time.Millisecond
	if !dropped.Stored.Valid() {
		t.Fatal("the copied unit has no Stored: nothing to clear")
	}
	if err := w.WriteUnit(&dropped); err != nil {
		t.Fatal(err)
	}
	if dropped.Stored != (media.Stored{}) {
		t.Fatalf("dropped unit has Stored %+v", dropped.Stored)
	}
	w.Close()
	drain(t, sp)
	if n := len(ds.stored()); n != 2 {
		t.Fatalf("%d segments stored, want 2", n)
	}
}

// withParams returns the units of st with the parameter sets in front of
// every keyframe's NAL units: sps1 before the keyframe at switchAt, sps2
// from it on (a change of parameter sets closes the segment there).
func withParams(st *tinyStream, sps1, sps2, pps []byte, switchAt time.Duration) []*media.Unit {
	out := make([]*media.Unit, len(st.units))
	for i, u := range st.units {
		c := *u
		if c.Track == 0 && c.Key {
			sps := sps1
			if c.DTS >= switchAt {
				sps = sps2
			}
			c.NALUs = append([][]byte{sps, pps}, c.NALUs...)
		}
		out[i] = &c
	}
	return out
}

// own returns a copy of u whose NAL units and payload are in memory of
// their own, and a function that overwrites that memory with
// media.PoisonByte, as a released buffer is under test. (Pooled buffers
// are not used: the pool hands the same buffer to the next unit, which
// often holds the same parameter sets at the same place, and would hide a
// reference kept into it.)
func own(u *media.Unit) (*media.Unit, func()) {
	c := *u
	b := make([]byte, 0, u.Size())
	c.NALUs = nil
	for _, n := range u.NALUs {
		b = append(b, n...)
		c.NALUs = append(c.NALUs, b[len(b)-len(n):len(b):len(b)])
	}
	if u.Payload != nil {
		b = append(b, u.Payload...)
		c.Payload = b[len(b)-len(u.Payload) : len(b) : len(b)]
	}
	return &c, func() {
		for i := range b {
			b[i] = media.PoisonByte
		}
	}
}

// TestWriterKeepsNoUnitMemory writes the same stream twice: once as it
// is, once with each unit's memory overwritten as soon as WriteUnit
// returns. The keyframes carry their parameter sets,
// which change mid-stream, so the writer compares and keeps parameter sets
// from unit memory. Both runs must store the same segments byte for byte.
func TestWriterKeepsNoUnitMemory(t *testing.T) {
	st := newTinyStream(t, 25*8, 40*time.Millisecond, 25, 64*time.Millisecond)
	big, err := synth.Fixture(synth.CodecH264, false)
	if err != nil {
		t.Fatal(err)
	}
	vt := st.tracks[0]
	units := withParams(st, vt.SPS, big.SPS, vt.PPS, 3*time.Second)

	write := func(overwrite bool) ([]Segment, [][]byte) {
		ds := &dirStore{dir: t.TempDir()}
		sp := newTestSpool(t, t.TempDir(), ds)
		w := NewWriter(WriterConfig{Camera: "cam1", SegmentDuration: 2 * time.Second, Spool: sp, Log: zaptest.NewLogger(t)})
		if err := w.SetTracks(st.tracks); err != nil {
			t.Fatal(err)
		}
		for _, u := range units {
			poison := func() {}
			if overwrite {
				u, poison = own(u)
			}
			if err := w.WriteUnit(u); err != nil {
				t.Fatal(err)
			}
			poison()
		}
		w.Close()
		drain(t, sp)
		segs := ds.stored()
		var files [][]byte
		for _, s := range segs {
			b, err := os.ReadFile(ds.path(s))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, b)
		}
		return segs, files
	}
	wantSegs, want := write(false)
	gotSegs, got := write(true)
	// Segments at 0 s, 2 s, 3 s (the parameter sets change) and 5 s, 7 s.
	if len(wantSegs) != 5 || wantSegs[2].Width != big.Width || wantSegs[1].Width == big.Width {
		t.Fatalf("reference run: %d segments %+v; want 5, the new size from the third", len(wantSegs), wantSegs)
	}
	if len(got) != len(want) {
		t.Fatalf("%d segments with overwritten units, %d without", len(got), len(want))
	}
	for i := range want {
		if gotSegs[i].Width != wantSegs[i].Width || gotSegs[i].Height != wantSegs[i].Height {
			t.Errorf("segment %d: %dx%d with overwritten units, %dx%d without", i, gotSegs[i].Width, gotSegs[i].Height, wantSegs[i].Width, wantSegs[i].Height)
		}
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("segment %d differs when units are overwritten after WriteUnit", i)
		}
	}
}
