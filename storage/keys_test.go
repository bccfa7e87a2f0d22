package storage_test

import (
	"errors"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/storage"
)

var t0 = time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.UTC)

func TestKeyBuilders(t *testing.T) {
	sp := time.FixedZone("BRT", -3*3600)
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"segment", storage.SegmentKey("cam-1", t0, 60*time.Second, 812), "rec/cam-1/2024/05/06/07/1714979289123_60000_812.mp4"},
		{"segment without init size", storage.SegmentKey("cam-1", t0, 60*time.Second, 0), "rec/cam-1/2024/05/06/07/1714979289123_60000.mp4"},
		{"segment, negative init size", storage.SegmentKey("cam-1", t0, 60*time.Second, -1), ""},
		{"segment in other zone uses UTC path", storage.SegmentKey("cam-1", t0.In(sp), 1500*time.Millisecond, 1), "rec/cam-1/2024/05/06/07/1714979289123_1500_1.mp4"},
		{"segment zero duration", storage.SegmentKey("c", t0, 0, 0), "rec/c/2024/05/06/07/1714979289123_0.mp4"},
		{"segment prefix", storage.SegmentPrefix("cam-1", t0), "rec/cam-1/2024/05/06/07/"},
		{"camera segments", storage.CameraSegmentsPrefix("cam_2"), "rec/cam_2/"},
		{"minute thumb", storage.MinuteThumbKey("cam-1", t0), "thumbs/cam-1/2024/05/06/07/1714979289.jpg"},
		{"minute thumb prefix", storage.MinuteThumbPrefix("cam-1", t0), "thumbs/cam-1/2024/05/06/07/"},
		{"hourly thumb", storage.HourlyThumbKey("cam-1", t0), "thumbs-hourly/cam-1/2024/05/06/1714979289.jpg"},
		{"hourly thumb prefix", storage.HourlyThumbPrefix("cam-1", t0), "thumbs-hourly/cam-1/2024/05/06/"},
		{"snapshot", storage.SnapshotKey("cam-1", t0), "snap/cam-1/1714979289123.jpg"},
		{"event image", storage.EventImageKey("cam-1", "ev_42"), "events/cam-1/ev_42.jpg"},
		{"video", storage.VideoKey("v-9"), "videos/v-9.mp4"},
		{"bad camera", storage.SegmentKey("../x", t0, time.Second, 1), ""},
		{"empty camera", storage.SnapshotKey("", t0), ""},
		{"slash camera", storage.MinuteThumbKey("a/b", t0), ""},
		{"long camera", storage.HourlyThumbKey(string(make([]byte, 65)), t0), ""},
		{"negative duration", storage.SegmentKey("c", t0, -time.Second, 1), ""},
		{"negative init size", storage.SegmentKey("c", t0, time.Second, -1), ""},
		{"before 1970", storage.SegmentKey("c", time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), time.Second, 1), ""},
		{"after 9999", storage.SegmentPrefix("c", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)), ""},
		{"bad event id", storage.EventImageKey("c", "a.b"), ""},
		{"bad video id", storage.VideoKey("../v"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Fatalf("got %q, want %q", tc.got, tc.want)
			}
			if tc.got != "" {
				if err := storage.ValidatePrefix(tc.got); err != nil {
					t.Fatalf("built key %q is not a valid prefix: %v", tc.got, err)
				}
			}
		})
	}
}

// parseCases seed both TestParseSegmentKey and FuzzParseSegmentKey.
var parseCases = []struct {
	name     string
	key      string
	camera   string
	start    int64
	dur      int64
	initSize int64
	wantErr  bool
}{
	{name: "valid", key: "rec/cam-1/2024/05/06/07/1714979289123_60000_812.mp4", camera: "cam-1", start: 1714979289123, dur: 60000, initSize: 812},
	{name: "older form", key: "rec/cam-1/2024/05/06/07/1714979289123_60000.mp4", camera: "cam-1", start: 1714979289123, dur: 60000},
	{name: "epoch", key: "rec/c/1970/01/01/00/0_0.mp4", camera: "c", start: 0, dur: 0},
	{name: "epoch with init size", key: "rec/c/1970/01/01/00/0_0_1.mp4", camera: "c", start: 0, dur: 0, initSize: 1},
	{name: "hour boundary", key: "rec/c/2024/05/06/08/1714982400000_1_5000.mp4", camera: "c", start: 1714982400000, dur: 1, initSize: 5000},
	{name: "largest init size", key: "rec/c/2024/05/06/07/1714979289123_60000_9223372036854775807.mp4", camera: "c", start: 1714979289123, dur: 60000, initSize: 9223372036854775807},
	{name: "wrong hour", key: "rec/c/2024/05/06/08/1714979289123_60000.mp4", wantErr: true},
	{name: "local hour", key: "rec/c/2024/05/06/04/1714979289123_60000.mp4", wantErr: true},
	{name: "wrong prefix", key: "thumbs/c/2024/05/06/07/1714979289123_60000.mp4", wantErr: true},
	{name: "bad camera", key: "rec/c.d/2024/05/06/07/1714979289123_60000.mp4", wantErr: true},
	{name: "parent camera", key: "rec/../2024/05/06/07/1714979289123_60000.mp4", wantErr: true},
	{name: "missing level", key: "rec/c/2024/05/06/1714979289123_60000.mp4", wantErr: true},
	{name: "extra level", key: "rec/c/2024/05/06/07/x/1714979289123_60000.mp4", wantErr: true},
	{name: "not mp4", key: "rec/c/2024/05/06/07/1714979289123_60000.jpg", wantErr: true},
	{name: "no underscore", key: "rec/c/2024/05/06/07/1714979289123.mp4", wantErr: true},
	{name: "three underscores", key: "rec/c/2024/05/06/07/1714979289123_60000_1_2.mp4", wantErr: true},
	{name: "zero init size", key: "rec/c/2024/05/06/07/1714979289123_60000_0.mp4", wantErr: true},
	{name: "init size leading zero", key: "rec/c/2024/05/06/07/1714979289123_60000_0812.mp4", wantErr: true},
	{name: "empty init size", key: "rec/c/2024/05/06/07/1714979289123_60000_.mp4", wantErr: true},
	{name: "negative init size", key: "rec/c/2024/05/06/07/1714979289123_60000_-812.mp4", wantErr: true},
	{name: "init size overflow", key: "rec/c/2024/05/06/07/1714979289123_60000_9223372036854775808.mp4", wantErr: true},
	{name: "init size not decimal", key: "rec/c/2024/05/06/07/1714979289123_60000_0x32c.mp4", wantErr: true},
	{name: "cause on a segment", key: "rec/c/2024/05/06/07/1714979289123_60000_rtp_loss.mp4", wantErr: true},
	{name: "negative start", key: "rec/c/1969/12/31/23/-1_60000.mp4", wantErr: true},
	{name: "plus sign", key: "rec/c/2024/05/06/07/+1714979289123_60000.mp4", wantErr: true},
	{name: "leading zero", key: "rec/c/2024/05/06/07/1714979289123_060000.mp4", wantErr: true},
	{name: "empty duration", key: "rec/c/2024/05/06/07/1714979289123_.mp4", wantErr: true},
	{name: "overflow", key: "rec/c/2024/05/06/07/99999999999999999999_1.mp4", wantErr: true},
	{name: "short year", key: "rec/c/24/05/06/07/1714979289123_60000.mp4", wantErr: true},
	{name: "empty", key: "", wantErr: true},
	{name: "trailing slash", key: "rec/c/2024/05/06/07/1714979289123_60000.mp4/", wantErr: true},
}

func TestParseSegmentKey(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			camera, start, dur, initSize, err := storage.ParseSegmentKey(tc.key)
			if tc.wantErr {
				if !errors.Is(err, storage.ErrInvalidSegmentKey) {
					t.Fatalf("ParseSegmentKey(%q) err = %v, want ErrInvalidSegmentKey", tc.key, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSegmentKey(%q): %v", tc.key, err)
			}
			if camera != tc.camera || start != tc.start || dur != tc.dur || initSize != tc.initSize {
				t.Fatalf("ParseSegmentKey(%q) = %q, %d, %d, %d", tc.key, camera, start, dur, initSize)
			}
			if got := storage.SegmentKeyOfName(camera, path.Base(tc.key)); got != tc.key {
				t.Fatalf("SegmentKeyOfName(%q, %q) = %q", camera, path.Base(tc.key), got)
			}
		})
	}
}

func TestSegmentKeyOfName(t *testing.T) {
	for _, tc := range []struct {
		name, camera, file, want string
	}{
		{"with init size", "cam-1", "1714979289123_60000_812.mp4", "rec/cam-1/2024/05/06/07/1714979289123_60000_812.mp4"},
		{"older form", "cam-1", "1714979289123_60000.mp4", "rec/cam-1/2024/05/06/07/1714979289123_60000.mp4"},
		{"bad camera", "../c", "1714979289123_60000_812.mp4", ""},
		{"gap record", "cam-1", "1714979289123_60000_rtp_loss.gap", ""},
		{"cause", "cam-1", "1714979289123_60000_rtp_loss.mp4", ""},
		{"zero init size", "cam-1", "1714979289123_60000_0.mp4", ""},
		{"leading zero", "cam-1", "01714979289123_60000.mp4", ""},
		{"path", "cam-1", "07/1714979289123_60000.mp4", ""},
		{"after 9999", "cam-1", "253402300800000_1.mp4", ""},
		{"empty", "cam-1", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := storage.SegmentKeyOfName(tc.camera, tc.file); got != tc.want {
				t.Fatalf("SegmentKeyOfName(%q, %q) = %q, want %q", tc.camera, tc.file, got, tc.want)
			}
		})
	}
}

func FuzzParseSegmentKey(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.key)
	}
	f.Fuzz(func(t *testing.T, key string) {
		camera, start, dur, initSize, err := storage.ParseSegmentKey(key)
		if err != nil {
			if !errors.Is(err, storage.ErrInvalidSegmentKey) {
				t.Fatalf("error %v does not wrap ErrInvalidSegmentKey", err)
			}
			return
		}
		// Whatever parses is exactly what SegmentKey builds, and a valid key.
		rebuilt := storage.SegmentKey(camera, time.UnixMilli(start), time.Duration(dur)*time.Millisecond, initSize)
		if rebuilt != key {
			t.Fatalf("ParseSegmentKey(%q) = %q, %d, %d, %d, which builds %q", key, camera, start, dur, initSize, rebuilt)
		}
		if got := storage.SegmentKeyOfName(camera, path.Base(key)); got != key {
			t.Fatalf("SegmentKeyOfName(%q, %q) = %q, want the key parsed", camera, path.Base(key), got)
		}
		if err := storage.ValidateKey(key); err != nil {
			t.Fatalf("parsed key %q is not valid: %v", key, err)
		}
	})
}

func TestGapKey(t *testing.T) {
	start := time.UnixMilli(1714979289123)
	for _, tc := range []struct {
		name, camera, cause string
		dur                 time.Duration
		want                string
	}{
		{"closed", "cam-1", "camera_offline", 4500 * time.Millisecond, "rec/cam-1/2024/05/06/07/1714979289123_4500_camera_offline.gap"},
		{"open", "cam-1", "node_crash", 0, "rec/cam-1/2024/05/06/07/1714979289123_0_node_crash.gap"},
		{"bad cause", "cam-1", "Camera", time.Second, ""},
		{"cause with digit", "cam-1", "cause1", time.Second, ""},
		{"empty cause", "cam-1", "", time.Second, ""},
		{"long cause", "cam-1", strings.Repeat("a", 33), time.Second, ""},
		{"bad camera", "../x", "rtp_loss", time.Second, ""},
		{"negative", "cam-1", "rtp_loss", -time.Second, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := storage.GapKey(tc.camera, start, tc.dur, tc.cause)
			if got != tc.want {
				t.Fatalf("GapKey = %q, want %q", got, tc.want)
			}
			if got == "" {
				return
			}
			cam, s, d, cause, err := storage.ParseGapKey(got)
			if err != nil || cam != tc.camera || s != start.UnixMilli() || d != tc.dur.Milliseconds() || cause != tc.cause {
				t.Fatalf("ParseGapKey(%q) = %q %d %d %q %v", got, cam, s, d, cause, err)
			}
			if _, _, _, _, err := storage.ParseSegmentKey(got); !errors.Is(err, storage.ErrInvalidSegmentKey) {
				t.Fatalf("ParseSegmentKey accepted the gap key %q", got)
			}
			if !strings.HasPrefix(got, storage.SegmentPrefix(tc.camera, start)) {
				t.Fatalf("gap key %q is not in the hour folder of its segments", got)
			}
		})
	}
	for _, seg := range []string{storage.SegmentKey("cam-1", start, time.Second, 812), storage.SegmentKey("cam-1", start, time.Second, 0)} {
		if _, _, _, _, err := storage.ParseGapKey(seg); !errors.Is(err, storage.ErrInvalidSegmentKey) {
			t.Fatalf("ParseGapKey accepted the segment key %q", seg)
		}
	}
	for _, bad := range []string{
		"rec/c/2024/05/06/07/1714979289123_10.gap",
		"rec/c/2024/05/06/07/1714979289123_10_.gap",
		"rec/c/2024/05/06/07/1714979289123_10_A.gap",
		"rec/c/2024/05/06/08/1714979289123_10_rtp_loss.gap",
		"rec/c/2024/05/06/07/1714979289123_010_rtp_loss.gap",
	} {
		if _, err := storage.ParseRecordingKey(bad); !errors.Is(err, storage.ErrInvalidSegmentKey) {
			t.Errorf("ParseRecordingKey(%q) err = %v", bad, err)
		}
	}
}

func FuzzParseRecordingKey(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.key)
	}
	f.Add("rec/cam-1/2024/05/06/07/1714979289123_4500_camera_offline.gap")
	f.Add("rec/cam-1/2024/05/06/07/1714979289123_0_node_crash.gap")
	f.Fuzz(func(t *testing.T, key string) {
		e, err := storage.ParseRecordingKey(key)
		if err != nil {
			if !errors.Is(err, storage.ErrInvalidSegmentKey) {
				t.Fatalf("error %v does not wrap ErrInvalidSegmentKey", err)
			}
			return
		}
		// Whatever parses is exactly what SegmentKey or GapKey builds.
		start, dur := time.UnixMilli(e.StartMs), time.Duration(e.DurMs)*time.Millisecond
		rebuilt := storage.SegmentKey(e.Camera, start, dur, e.InitSize)
		if e.Kind == storage.KindGap {
			if e.InitSize != 0 {
				t.Fatalf("ParseRecordingKey(%q) = %+v: a gap record with an init size", key, e)
			}
			rebuilt = storage.GapKey(e.Camera, start, dur, e.Cause)
		}
		if rebuilt != key {
			t.Fatalf("ParseRecordingKey(%q) = %+v, which builds %q", key, e, rebuilt)
		}
		if err := storage.ValidateKey(key); err != nil {
			t.Fatalf("parsed key %q is not valid: %v", key, err)
		}
	})
}
