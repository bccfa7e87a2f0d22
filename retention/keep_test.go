package retention

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
)

func TestKeepAroundEvents(t *testing.T) {
	ctx := context.Background()
	st, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 3, 20, 15, 30, 0, 0, time.UTC)
	event := now.Add(-3*24*time.Hour - 4*time.Hour) // past history_days (1), within event_keep_days (10)
	var asked [2]time.Time
	keep := EventKeep{Days: 10, PreRoll: 30 * time.Second, PostRoll: 60 * time.Second,
		Events: func(_ context.Context, from, to time.Time) ([]time.Time, error) {
			asked = [2]time.Time{from, to}
			return []time.Time{event, now.Add(-20 * 24 * time.Hour)}, nil
		}}
	seg := func(start time.Time) string { return storage.SegmentKey("cam", start, 10*time.Second, 812) }
	kept := []string{
		seg(event.Add(-35 * time.Second)), // its end is in the pre-roll
		seg(event),
		seg(event.Add(55 * time.Second)), // starts in the post-roll
		seg(now.Add(-2 * time.Hour)),     // within history_days
	}
	gone := []string{
		seg(event.Add(-2 * time.Minute)), // before the pre-roll
		seg(event.Add(10 * time.Minute)), // after the post-roll
		seg(now.Add(-2 * 24 * time.Hour)),
		seg(now.Add(-12 * 24 * time.Hour)),   // past event_keep_days too
		storage.MinuteThumbKey("cam", event), // thumbnails follow history_days
	}
	for _, k := range append(append([]string{}, kept...), gone...) {
		put(t, st, k, 1)
	}
	cams := func(context.Context) ([]CameraRetention, error) {
		return []CameraRetention{{Camera: "cam", Days: 1, Keep: keep}}, nil
	}
	sw, err := New(Config{Store: st, Cameras: cams, Now: func() time.Time { return now }, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range kept {
		if _, err := st.Stat(ctx, k); err != nil {
			t.Errorf("%s deleted: %v", k, err)
		}
	}
	for _, k := range gone {
		if _, err := st.Stat(ctx, k); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s kept: %v", k, err)
		}
	}
	if want := now.Add(-10*24*time.Hour - time.Minute); !asked[0].Equal(want) {
		t.Errorf("events asked from %v, want %v", asked[0], want)
	}

	// Without the keep, the segments around the event go too.
	keep.Days = 1
	if _, err := sw.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stat(ctx, seg(event)); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("segment of the event kept after event_keep_days shrank: %v", err)
	}
}

func TestKeptSpans(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	k := EventKeep{PreRoll: 10 * time.Second, PostRoll: 20 * time.Second,
		Events: func(context.Context, time.Time, time.Time) ([]time.Time, error) {
			return []time.Time{t0.Add(100 * time.Second), t0, t0.Add(25 * time.Second)}, nil
		}}
	spans, err := k.KeptSpans(context.Background(), t0, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []Span{{t0.Add(-10 * time.Second), t0.Add(45 * time.Second)}, {t0.Add(90 * time.Second), t0.Add(120 * time.Second)}}
	if len(spans) != 2 || spans[0] != want[0] || spans[1] != want[1] {
		t.Fatalf("spans %v, want %v", spans, want)
	}
	for _, tc := range []struct {
		name       string
		start, end time.Duration
		want       bool
	}{
		{"before", -30 * time.Second, -10 * time.Second, false},
		{"into the first", -15 * time.Second, -5 * time.Second, true},
		{"between", 45 * time.Second, 90 * time.Second, false},
		{"inside the second", 95 * time.Second, 96 * time.Second, true},
		{"after", 120 * time.Second, 130 * time.Second, false},
	} {
		if got := overlaps(spans, t0.Add(tc.start), t0.Add(tc.end)); got != tc.want {
			t.Errorf("%s: %v", tc.name, got)
		}
	}
}
