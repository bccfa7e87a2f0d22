package catalogue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
)

// TestCatalogue runs every case against the fs store and MinIO.
func TestCatalogue(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T, st storage.Store)
	}{
		{"segment boundaries", testSegmentBoundaries},
		{"hour boundaries", testHourBoundaries},
		{"long segments", testLongSegments},
		{"range in order over many hours", testRangeOrder},
		{"gaps and their causes", testTimelineFromStorage},
		{"open gap from hours before", testTimelineLooksBack},
		{"init sizes", testInitSizes},
		{"a day's playlist on a fresh catalogue", testDayPlaylistCold},
		{"last before", testLastBefore},
		{"last before lists the hours present", testLastBeforeListings},
		{"thumbnails", testThumbs},
		{"journal", testJournal},
	}
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.run(t, b.new(t)) })
			}
		})
	}
}

func keys(segs []Segment) []string {
	out := make([]string, len(segs))
	for i, s := range segs {
		out[i] = s.Key
	}
	return out
}

func testSegmentBoundaries(t *testing.T, st storage.Store) {
	c := New(Config{Store: st})
	ctx := context.Background()
	a := putSegment(t, st, "cam", at(10, 0, 0), 10*time.Second, 800)
	b := putSegment(t, st, "cam", at(10, 0, 10), 10*time.Second, 800)
	for _, tc := range []struct {
		name     string
		from, to time.Time
		want     []string
	}{
		{"first only, to at the boundary", at(10, 0, 0), at(10, 0, 10), []string{a}},
		{"second only, from at the boundary", at(10, 0, 10), at(10, 0, 11), []string{b}},
		{"both, from a millisecond before the boundary", at(10, 0, 10).Add(-time.Millisecond), at(10, 0, 11), []string{a, b}},
		{"before both", at(9, 0, 0), at(10, 0, 0), nil},
		{"after both", at(10, 0, 20), at(11, 0, 0), nil},
	} {
		got, err := c.Segments(ctx, "cam", tc.from, tc.to)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(keys(got)) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, keys(got), tc.want)
		}
	}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{at(10, 0, 0), a}, {at(10, 0, 9).Add(999 * time.Millisecond), a}, {at(10, 0, 10), b}, {at(10, 0, 19), b},
	} {
		s, err := c.SegmentAt(ctx, "cam", tc.at)
		if err != nil || s.Key != tc.want {
			t.Errorf("SegmentAt(%v) = %q, %v; want %q", tc.at, s.Key, err, tc.want)
		}
	}
	if _, err := c.SegmentAt(ctx, "cam", at(10, 0, 20)); !errors.Is(err, ErrNoRecording) {
		t.Errorf("SegmentAt at the end of the last segment: %v, want ErrNoRecording", err)
	}
	if _, err := c.Segments(ctx, "../cam", at(10, 0, 0), at(11, 0, 0)); !errors.Is(err, ErrInvalidRange) {
		t.Errorf("bad camera: %v", err)
	}
	if _, err := c.Segments(ctx, "cam", at(11, 0, 0), at(10, 0, 0)); !errors.Is(err, ErrInvalidRange) {
		t.Errorf("reversed range: %v", err)
	}
	// Another camera's objects and foreign keys are not listed.
	putSegment(t, st, "cam2", at(10, 0, 0), 10*time.Second, 800)
	if err := st.Put(ctx, storage.SegmentPrefix("cam", at(10, 0, 0))+"notes.txt", bytes.NewReader(nil), 0, storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Segments(ctx, "cam", at(10, 0, 0), at(11, 0, 0))
	if err != nil || len(got) != 2 {
		t.Errorf("with neighbours: %v %v", keys(got), err)
	}
}

// A segment that began in the hour before the range (its key is in that
// hour's folder) is found, by Segments and SegmentAt.
func testHourBoundaries(t *testing.T, st storage.Store) {
	c := New(Config{Store: st})
	ctx := context.Background()
	a := putSegment(t, st, "cam", at(13, 59, 30), time.Minute, 800)
	b := putSegment(t, st, "cam", at(14, 0, 30), time.Minute, 800)
	got, err := c.Segments(ctx, "cam", at(14, 0, 0), at(14, 0, 20))
	if err != nil || fmt.Sprint(keys(got)) != fmt.Sprint([]string{a}) {
		t.Errorf("Segments across the hour: %v %v, want [%s]", keys(got), err, a)
	}
	if s, err := c.SegmentAt(ctx, "cam", at(14, 0, 29)); err != nil || s.Key != a {
		t.Errorf("SegmentAt 14:00:29 = %q %v, want %s", s.Key, err, a)
	}
	if s, err := c.SegmentAt(ctx, "cam", at(14, 0, 30)); err != nil || s.Key != b {
		t.Errorf("SegmentAt 14:00:30 = %q %v, want %s", s.Key, err, b)
	}
	// A range ending exactly at an hour lists no folder after it.
	cs := &countingStore{Store: st}
	c2 := New(Config{Store: cs, MaxSegment: time.Minute})
	if _, err := c2.Segments(ctx, "cam", at(13, 10, 0), at(14, 0, 0)); err != nil {
		t.Fatal(err)
	}
	if n := cs.lists.Load(); n != 1 {
		t.Errorf("%d listings for 13:10-14:00, want 1 (hour 13 only)", n)
	}
}

// A long segment setting: with MaxSegment from the configured duration, a
// 19-minute segment that began 18 minutes before the range (in the hour
// before) is found; with a look-back shorter than the segment it would not
// be.
func testLongSegments(t *testing.T, st storage.Store) {
	ctx := context.Background()
	key := putSegment(t, st, "cam", at(13, 45, 0), 19*time.Minute, 800)
	long := New(Config{Store: st, MaxSegment: 20 * time.Minute})
	s, err := long.SegmentAt(ctx, "cam", at(14, 3, 0))
	if err != nil || s.Key != key {
		t.Errorf("SegmentAt with MaxSegment 20 min = %q %v, want %s", s.Key, err, key)
	}
	short := New(Config{Store: st, MaxSegment: 2 * time.Minute})
	if _, err := short.SegmentAt(ctx, "cam", at(14, 3, 0)); !errors.Is(err, ErrNoRecording) {
		t.Errorf("a look-back shorter than the segment found it: %v (the test cannot fail)", err)
	}
}

// Range yields every hour in time order however many are listed at once.
func testRangeOrder(t *testing.T, st storage.Store) {
	c := New(Config{Store: st, ListAhead: 4})
	base := at(0, 0, 0)
	var want []string
	for i := 0; i < 30; i++ {
		want = append(want, putSegment(t, st, "cam", base.Add(time.Duration(i)*time.Hour+10*time.Minute), 20*time.Minute, 800))
	}
	var got []string
	var hours int
	for h, err := range c.Range(context.Background(), "cam", base, base.Add(30*time.Hour)) {
		if err != nil {
			t.Fatal(err)
		}
		hours++
		got = append(got, keys(h.Segments)...)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || hours != 31 {
		t.Errorf("%d hours, segments %v\nwant 31 hours (from the look-back), %v", hours, got, want)
	}
	// Stopping early is fine.
	for _, err := range c.Range(context.Background(), "cam", base, base.Add(30*time.Hour)) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
}

func testTimelineFromStorage(t *testing.T, st storage.Store) {
	now := at(12, 0, 0)
	c := New(Config{Store: st, Now: func() time.Time { return now }})
	putSegment(t, st, "cam", at(10, 0, 0), 10*time.Second, 800)
	putSegment(t, st, "cam", at(10, 0, 20), 10*time.Second, 800)
	putSegment(t, st, "cam", at(10, 0, 31), 9*time.Second, 800)
	putGap(t, st, status.Gap{Camera: "cam", StartMs: ms(at(10, 0, 10)), Cause: status.CauseCameraOffline})
	putGap(t, st, status.Gap{Camera: "cam", StartMs: ms(at(10, 0, 30)), EndMs: ms(at(10, 0, 31)), Cause: status.CauseRTPLoss})
	tl, err := c.Timeline(context.Background(), "cam", at(10, 0, 0), at(10, 1, 0), TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Gap{
		{ms(at(10, 0, 10)), ms(at(10, 0, 20)), status.CauseCameraOffline},
		{ms(at(10, 0, 30)), ms(at(10, 0, 31)), status.CauseRTPLoss},
		{ms(at(10, 0, 40)), ms(at(10, 1, 0)), status.CauseUnknown},
	}
	if fmt.Sprint(tl.Gaps) != fmt.Sprint(want) {
		t.Errorf("gaps %v\nwant %v", tl.Gaps, want)
	}
	if tl.RecordedMs != 29_000 || len(tl.Recorded) != 3 {
		t.Errorf("recorded %v (%d ms), want 3 spans of 29 s", tl.Recorded, tl.RecordedMs)
	}
}

// A camera offline since hours before the range: the gap's record is in an
// hour folder before the range, and the timeline finds it.
func testTimelineLooksBack(t *testing.T, st storage.Store) {
	now := at(12, 0, 0)
	c := New(Config{Store: st, Now: func() time.Time { return now }})
	putSegment(t, st, "cam", at(7, 10, 0), 10*time.Minute, 800)
	putGap(t, st, status.Gap{Camera: "cam", StartMs: ms(at(7, 20, 0)), Cause: status.CauseCameraAuth})
	tl, err := c.Timeline(context.Background(), "cam", at(11, 0, 0), at(12, 0, 0), TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Gap{{ms(at(11, 0, 0)), ms(at(12, 0, 0)), status.CauseCameraAuth}}
	if fmt.Sprint(tl.Gaps) != fmt.Sprint(want) {
		t.Errorf("gaps %v, want %v", tl.Gaps, want)
	}
	// Without the look-back the cause would be unknown.
	tl, err = c.Timeline(context.Background(), "cam", at(11, 0, 0), at(12, 0, 0), TimelineOptions{LookBack: time.Hour})
	if err != nil || len(tl.Gaps) != 1 || tl.Gaps[0].Cause != status.CauseUnknown {
		t.Errorf("with a one-hour look-back: %v %v, want unknown", tl.Gaps, err)
	}
}

func testInitSizes(t *testing.T, st storage.Store) {
	cs := &countingStore{Store: st}
	c := New(Config{Store: cs})
	ctx := context.Background()
	// Even seconds: keys that carry their init sizes; odd ones: the older
	// form, the init size in the metadata only.
	for i := range 40 {
		put := putSegment
		if i%2 == 1 {
			put = putOlderSegment
		}
		put(t, st, "cam", at(10, 0, 0).Add(time.Duration(i)*time.Second), time.Second, int64(700+i))
	}
	noInit := putOlderSegment(t, st, "cam", at(10, 0, 40), time.Second, 0)
	segs, err := c.Segments(ctx, "cam", at(10, 0, 0), at(10, 1, 0))
	if err != nil || len(segs) != 41 {
		t.Fatalf("%d segments, %v", len(segs), err)
	}
	for i, s := range segs {
		want := int64(700 + i)
		if i%2 == 1 || s.Key == noInit {
			want = 0
		}
		if s.InitSize != want {
			t.Errorf("listed %s: init size %d, want %d", s.Key, s.InitSize, want)
		}
	}
	if err := c.InitSizes(ctx, segs); err != nil {
		t.Fatal(err)
	}
	for i, s := range segs {
		want := int64(700 + i)
		if s.Key == noInit {
			want = 0
		}
		if s.InitSize != want {
			t.Errorf("%s: init size %d, want %d", s.Key, s.InitSize, want)
		}
	}
	if n := cs.stats.Load(); n != 21 {
		t.Errorf("%d Stat calls for 20 segments of the older form and one without init-size, want 21", n)
	}
	// Again: only the segment without init-size is read.
	segs, _ = c.Segments(ctx, "cam", at(10, 0, 0), at(10, 1, 0))
	if err := c.InitSizes(ctx, segs); err != nil {
		t.Fatal(err)
	}
	if n := cs.stats.Load(); n != 22 {
		t.Errorf("%d Stat calls after a second pass, want 22 (the cache answers the rest)", n)
	}
	// A noted init size needs no Stat; one noted for a key that carries
	// it is not kept.
	k := putOlderSegment(t, st, "cam", at(10, 0, 50), time.Second, 900)
	c.NoteInitSize(k, 900)
	c.NoteInitSize(putSegment(t, st, "cam", at(10, 0, 51), time.Second, 901), 901)
	one := []Segment{{Key: k}}
	if err := c.InitSizes(ctx, one); err != nil || one[0].InitSize != 900 || cs.stats.Load() != 22 {
		t.Errorf("noted init size: %d, %d Stats, %v", one[0].InitSize, cs.stats.Load(), err)
	}
	if s := c.CacheStats(); s.Entries != 21 || s.Misses != 22 || s.Hits != 21 {
		t.Errorf("cache stats %+v, want 21 entries, 22 misses, 21 hits", s)
	}
	// A key whose init size is not below the object's size is not
	// believed: the metadata is read.
	bad := putSegmentKey(t, st, storage.SegmentKey("cam", at(11, 0, 0), time.Second, 5000), 60)
	segs, err = c.Segments(ctx, "cam", at(11, 0, 0), at(11, 0, 1))
	if err != nil || len(segs) != 1 || segs[0].Key != bad || segs[0].InitSize != 0 {
		t.Fatalf("listed %+v, %v: want %s without an init size", segs, err, bad)
	}
	if err := c.InitSizes(ctx, segs); err != nil || segs[0].InitSize != 60 || cs.stats.Load() != 23 {
		t.Errorf("init size %d after %d Stats, %v: want 60 from the metadata", segs[0].InitSize, cs.stats.Load(), err)
	}
}

// testDayPlaylistCold reads what the recorded playlist of a day needs as
// the player does (each hour listed, its init sizes filled) on a fresh
// catalogue: with keys that carry the init sizes it makes no Stat;
// a day stored in the older key form has each init size read once.
func testDayPlaylistCold(t *testing.T, st storage.Store) {
	ctx := context.Background()
	const segDur = 5 * time.Minute
	day := at(0, 0, 0)
	for i := range 24 * 12 {
		start := day.Add(time.Duration(i) * segDur)
		putSegment(t, st, "keyed", start, segDur, int64(600+i%7))
		putOlderSegment(t, st, "older", start, segDur, int64(600+i%7))
	}
	for _, tc := range []struct {
		camera string
		stats  int64
	}{
		{"keyed", 0},
		{"older", 24 * 12},
	} {
		t.Run(tc.camera, func(t *testing.T) {
			cs := &countingStore{Store: st}
			c := New(Config{Store: cs, MaxSegment: storage.MaxSegmentDuration(segDur)})
			n := 0
			for h, err := range c.Range(ctx, tc.camera, day, day.Add(24*time.Hour)) {
				if err != nil {
					t.Fatal(err)
				}
				if err := c.InitSizes(ctx, h.Segments); err != nil {
					t.Fatal(err)
				}
				for _, s := range h.Segments {
					if want := int64(600 + n%7); s.InitSize != want {
						t.Errorf("%s: init size %d, want %d", s.Key, s.InitSize, want)
					}
					n++
				}
			}
			if n != 24*12 {
				t.Errorf("%d segments listed, want %d", n, 24*12)
			}
			if got := cs.stats.Load(); got != tc.stats {
				t.Errorf("%d Stat calls for a day's playlist on a fresh catalogue, want %d", got, tc.stats)
			}
			if got := cs.lists.Load(); got < 24 || got > 26 {
				t.Errorf("%d List calls for a day, want one an hour", got)
			}
		})
	}
}

// testLastBeforeListings: a camera starting looks for its last segment
// with a few listings whatever the look-back: its hour, then one listing of
// each day's hour folders and only the hours present (one a look-back, 25
// listings for 24 hours, made hundreds of starting cameras time out on
// MinIO).
func testLastBeforeListings(t *testing.T, st storage.Store) {
	cs := &countingStore{Store: st}
	c := New(Config{Store: cs})
	ctx := context.Background()
	now := at(9, 30, 0)
	l, err := c.LastBefore(ctx, "cam", now, 24*time.Hour)
	if err != nil || !l.End.IsZero() || l.GapAfter {
		t.Fatalf("nothing stored: %+v %v", l, err)
	}
	if n := cs.lists.Load(); n > 3 {
		t.Errorf("%d List calls for a camera with nothing stored in 24 hours, want 3 at most (its hour, today's and yesterday's hours)", n)
	}
	// A segment yesterday at 14:00, one after now and one of another
	// camera whose id extends this one's: only yesterday's counts.
	putSegment(t, st, "cam", at(14, 0, 0).AddDate(0, 0, -1), time.Minute, 800)
	putSegment(t, st, "cam", now.Add(time.Minute), time.Minute, 800) // after now
	putSegment(t, st, "cam2", at(8, 0, 0), time.Minute, 800)
	cs.lists.Store(0)
	l, err = c.LastBefore(ctx, "cam", now, 24*time.Hour)
	if want := at(14, 1, 0).AddDate(0, 0, -1); err != nil || !l.End.Equal(want) || l.GapAfter {
		t.Errorf("a segment yesterday: %+v %v, want end %v", l, err, want)
	}
	if n := cs.lists.Load(); n > 4 {
		t.Errorf("%d List calls, want 4 at most", n)
	}
	if l, _ := c.LastBefore(ctx, "cam", now, 18*time.Hour); !l.End.IsZero() {
		t.Errorf("within 18 hours: %+v, want nothing", l)
	}
	putGap(t, st, status.Gap{Camera: "cam", StartMs: ms(at(3, 0, 0)), Cause: status.CauseNodeCrash})
	if l, err := c.LastBefore(ctx, "cam", now, 24*time.Hour); err != nil || !l.End.IsZero() || !l.GapAfter {
		t.Errorf("a gap record today after yesterday's segment: %+v %v, want the gap in its hour", l, err)
	}
}

func testLastBefore(t *testing.T, st storage.Store) {
	c := New(Config{Store: st})
	ctx := context.Background()
	l, err := c.LastBefore(ctx, "cam", at(12, 0, 0), 24*time.Hour)
	if err != nil || !l.End.IsZero() || l.GapAfter {
		t.Fatalf("nothing stored: %+v %v", l, err)
	}
	putSegment(t, st, "cam", at(9, 0, 0), time.Minute, 800)
	putSegment(t, st, "cam", at(10, 59, 30), time.Minute, 800)
	l, err = c.LastBefore(ctx, "cam", at(12, 0, 0), 24*time.Hour)
	if err != nil || !l.End.Equal(at(11, 0, 30)) || l.GapAfter {
		t.Errorf("after two segments: %+v %v, want end 11:00:30", l, err)
	}
	putGap(t, st, status.Gap{Camera: "cam", StartMs: ms(at(11, 0, 30)), Cause: status.CauseNodeHandover})
	l, err = c.LastBefore(ctx, "cam", at(12, 0, 0), 24*time.Hour)
	if err != nil || !l.GapAfter {
		t.Errorf("with a gap record after the last segment: %+v %v", l, err)
	}
	if l, _ := c.LastBefore(ctx, "cam", at(12, 0, 0), 30*time.Minute); !l.End.IsZero() {
		t.Errorf("within 30 min: %+v", l)
	}
}
