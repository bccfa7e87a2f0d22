package catalogue

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
)

func testThumbs(t *testing.T, st storage.Store) {
	c := New(Config{Store: st})
	ctx := context.Background()
	put := func(key string) string {
		t.Helper()
		if err := st.Put(ctx, key, strings.NewReader("jpg"), 3, storage.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		return key
	}
	var minutes []string
	for _, tm := range []time.Time{at(9, 59, 0), at(10, 0, 0), at(10, 30, 0), at(10, 59, 0), at(11, 0, 0), at(12, 0, 0)} {
		minutes = append(minutes, put(storage.MinuteThumbKey("cam", tm)))
	}
	put(storage.MinuteThumbKey("other", at(10, 30, 0)))
	// Not Vigia's thumbnails, in the folders listed: skipped.
	put("thumbs/cam/2024/05/06/10/x.jpg")
	put("thumbs/cam/2024/05/06/10/0" + path.Base(minutes[2])) // a leading zero
	put("thumbs/cam/2024/05/06/10/" + path.Base(minutes[4]))  // in the wrong hour
	var hours []string
	for _, tm := range []time.Time{at(0, 0, 0).Add(-time.Hour), at(0, 0, 0), at(13, 0, 0), at(23, 0, 0), at(23, 0, 0).Add(time.Hour)} {
		hours = append(hours, put(storage.HourlyThumbKey("cam", tm)))
	}
	keys := func(ts []Thumb) []string {
		out := make([]string, len(ts))
		for i, th := range ts {
			out[i] = th.Key
			if want := storage.MinuteThumbKey("cam", time.Unix(th.TS, 0)); th.Key != want && storage.HourlyThumbKey("cam", time.Unix(th.TS, 0)) != th.Key {
				t.Errorf("%s: TS %d", th.Key, th.TS)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		kind     ThumbKind
		from, to time.Time
		want     []string
	}{
		{"an hour", MinuteThumbs, at(10, 0, 0), at(11, 0, 0), minutes[1:4]},
		{"across hours", MinuteThumbs, at(9, 30, 0), at(11, 0, 1), minutes[:5]},
		{"within a minute", MinuteThumbs, at(10, 29, 1), at(10, 30, 1), minutes[2:3]},
		{"none", MinuteThumbs, at(13, 0, 0), at(14, 0, 0), nil},
		{"a day", HourlyThumbs, at(0, 0, 0), at(0, 0, 0).Add(24 * time.Hour), hours[1:4]},
		{"across days", HourlyThumbs, at(0, 0, 0).Add(-time.Hour), at(0, 0, 0).Add(25 * time.Hour), hours},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := c.Thumbs(ctx, "cam", tc.kind, tc.from, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(keys(got), tc.want) {
				t.Errorf("got %q, want %q", keys(got), tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name     string
		camera   string
		kind     ThumbKind
		from, to time.Time
	}{
		{"bad camera", "../x", MinuteThumbs, at(10, 0, 0), at(11, 0, 0)},
		{"reversed", "cam", MinuteThumbs, at(11, 0, 0), at(10, 0, 0)},
		{"too long", "cam", MinuteThumbs, at(10, 0, 0), at(10, 0, 0).Add(32 * 24 * time.Hour)},
		{"bad kind", "cam", 0, at(10, 0, 0), at(11, 0, 0)},
	} {
		if _, err := c.Thumbs(ctx, tc.camera, tc.kind, tc.from, tc.to); !errors.Is(err, ErrInvalidRange) {
			t.Errorf("%s: err %v, want ErrInvalidRange", tc.name, err)
		}
	}
}
