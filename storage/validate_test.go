package storage_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/camera/cameratest"
	"github.com/vigia/vigia/storage"
)

// TestCameraIDRule: every key builder and parser takes exactly the camera
// ids camera.ValidID accepts (event and video ids too), and a key built
// from a valid id is a valid key that parses back to the id.
func TestCameraIDRule(t *testing.T) {
	at := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	for _, tc := range cameratest.IDCases() {
		t.Run(tc.Name, func(t *testing.T) {
			want := camera.ValidID(tc.ID) == nil
			if want != tc.Valid {
				t.Fatalf("camera.ValidID(%q) valid = %v, the case says %v", tc.ID, want, tc.Valid)
			}
			if got := storage.ValidCameraID(tc.ID); got != want {
				t.Fatalf("ValidCameraID(%q) = %v, want %v", tc.ID, got, want)
			}
			keys := map[string]string{
				"SegmentKey":           storage.SegmentKey(tc.ID, at, 6*time.Second, 100),
				"SegmentKeyOfName":     storage.SegmentKeyOfName(tc.ID, "1795314600000_6000_100.mp4"),
				"GapKey":               storage.GapKey(tc.ID, at, time.Second, "camera_offline"),
				"SegmentPrefix":        storage.SegmentPrefix(tc.ID, at),
				"CameraSegmentsPrefix": storage.CameraSegmentsPrefix(tc.ID),
				"MinuteThumbKey":       storage.MinuteThumbKey(tc.ID, at),
				"MinuteThumbPrefix":    storage.MinuteThumbPrefix(tc.ID, at),
				"HourlyThumbKey":       storage.HourlyThumbKey(tc.ID, at),
				"HourlyThumbPrefix":    storage.HourlyThumbPrefix(tc.ID, at),
				"SnapshotKey":          storage.SnapshotKey(tc.ID, at),
				"EventImageKey camera": storage.EventImageKey(tc.ID, "e1"),
				"EventImageKey event":  storage.EventImageKey("cam", tc.ID),
				"VideoKey":             storage.VideoKey(tc.ID),
			}
			for name, k := range keys {
				if (k != "") != want {
					t.Fatalf("%s(%q) = %q, want a key: %v", name, tc.ID, k, want)
				}
				if k != "" && storage.ValidatePrefix(k) != nil {
					t.Fatalf("%s(%q) = %q, not a valid key or prefix", name, tc.ID, k)
				}
			}
			// A key naming the camera in its place parses back only when valid.
			key := "rec/" + tc.ID + "/2026/11/22/02/1795314600000_6000_100.mp4"
			cam, _, _, _, err := storage.ParseSegmentKey(key)
			if (err == nil) != want || err == nil && cam != tc.ID {
				t.Fatalf("ParseSegmentKey(%q) = %q, %v; want valid %v", key, cam, err, want)
			}
		})
	}
}

func TestValidateKeyAndPrefix(t *testing.T) {
	tests := []struct {
		name     string
		s        string
		keyOK    bool
		prefixOK bool
	}{
		{"key", "rec/c/2024/x.mp4", true, true},
		{"single", "a", true, true},
		{"unicode", "a/ção", true, true},
		{"trailing slash", "rec/c/", false, true},
		{"partial segment", "rec/ca", true, true},
		{"empty", "", false, true},
		{"root slash", "/", false, false},
		{"absolute", "/a", false, false},
		{"parent", "a/../b", false, false},
		{"parent last", "a/..", false, false},
		{"dot first", ".meta/a", false, false},
		{"hidden partial", "a/.", false, false},
		{"double slash", "a//b", false, false},
		{"backslash", `a\b`, false, false},
		{"control", "a\tb", false, false},
		{"del", "a\x7fb", false, false},
		{"invalid utf8", "a\xc3", false, false},
		{"too long", strings.Repeat("a", storage.MaxKeyLen+1), false, false},
		{"max length", strings.Repeat("a", storage.MaxKeyLen), true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := storage.ValidateKey(tc.s)
			if (err == nil) != tc.keyOK || err != nil && !errors.Is(err, storage.ErrInvalidKey) {
				t.Errorf("ValidateKey(%q) = %v, want ok=%v", tc.s, err, tc.keyOK)
			}
			err = storage.ValidatePrefix(tc.s)
			if (err == nil) != tc.prefixOK || err != nil && !errors.Is(err, storage.ErrInvalidKey) {
				t.Errorf("ValidatePrefix(%q) = %v, want ok=%v", tc.s, err, tc.prefixOK)
			}
		})
	}
}

func TestNormalizeMetadata(t *testing.T) {
	tests := []struct {
		name    string
		in      map[string]string
		want    map[string]string
		wantErr bool
	}{
		{name: "nil", in: nil, want: nil},
		{name: "lower-cased", in: map[string]string{"Camera": "c1", "START-MS": "5"}, want: map[string]string{"camera": "c1", "start-ms": "5"}},
		{name: "underscore key", in: map[string]string{"a_b": "x"}, wantErr: true},
		{name: "empty key", in: map[string]string{"": "x"}, wantErr: true},
		{name: "same key twice", in: map[string]string{"a": "1", "A": "2"}, wantErr: true},
		{name: "non-ascii value", in: map[string]string{"a": "ção"}, wantErr: true},
		{name: "newline value", in: map[string]string{"a": "x\ny"}, wantErr: true},
		{name: "too big", in: map[string]string{"a": strings.Repeat("x", 2048)}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := storage.NormalizeMetadata(tc.in)
			if tc.wantErr {
				if !errors.Is(err, storage.ErrInvalidMetadata) {
					t.Fatalf("err = %v, want ErrInvalidMetadata", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestValidateTags(t *testing.T) {
	many := map[string]string{}
	for i := range 11 {
		many[string(rune('a'+i))] = "1"
	}
	tests := []struct {
		name string
		tags map[string]string
		ok   bool
	}{
		{"none", nil, true},
		{"retention", map[string]string{storage.TagRetentionDays: "30"}, true},
		{"allowed punctuation", map[string]string{"a b+c-d=e.f_g:h/i@j": "v w"}, true},
		{"empty value", map[string]string{"k": ""}, true},
		{"empty key", map[string]string{"": "v"}, false},
		{"bad char", map[string]string{"k": "v&w"}, false},
		{"long key", map[string]string{strings.Repeat("k", 129): "v"}, false},
		{"long value", map[string]string{"k": strings.Repeat("v", 257)}, false},
		{"eleven tags", many, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := storage.ValidateTags(tc.tags)
			if (err == nil) != tc.ok || err != nil && !errors.Is(err, storage.ErrInvalidMetadata) {
				t.Fatalf("ValidateTags(%v) = %v, want ok=%v", tc.tags, err, tc.ok)
			}
		})
	}
}

func TestContentTypeFor(t *testing.T) {
	tests := []struct{ key, given, want string }{
		{"a/b.mp4", "", "video/mp4"},
		{"a/b.JPG", "", "image/jpeg"},
		{"a/b.m3u8", "", "application/vnd.apple.mpegurl"},
		{"a/b", "", "application/octet-stream"},
		{"a/b.mp4", "video/iso.segment", "video/iso.segment"},
	}
	for _, tc := range tests {
		t.Run(tc.key+"|"+tc.given, func(t *testing.T) {
			if got := storage.ContentTypeFor(tc.key, tc.given); got != tc.want {
				t.Fatalf("ContentTypeFor(%q, %q) = %q, want %q", tc.key, tc.given, got, tc.want)
			}
		})
	}
}
