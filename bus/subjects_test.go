package bus

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateCamera(t *testing.T) {
	tests := []struct {
		name string
		id   string
		ok   bool
	}{
		{"digits", "12345", true},
		{"letters dash underscore", "cam_A-1", true},
		{"max length", strings.Repeat("a", 128), true},
		{"empty", "", false},
		{"too long", strings.Repeat("a", 129), false},
		{"dot splits subject", "cam.1", false},
		{"star wildcard", "cam*", false},
		{"gt wildcard", ">", false},
		{"space", "cam 1", false},
		{"slash", "cam/1", false},
		{"non ascii", "câmera", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateCamera(tt.id)
			if tt.ok && err != nil {
				t.Fatalf("ValidateCamera(%q) = %v, want nil", tt.id, err)
			}
			if !tt.ok && !errors.Is(err, ErrInvalidCamera) {
				t.Fatalf("ValidateCamera(%q) = %v, want ErrInvalidCamera", tt.id, err)
			}
		})
	}
}

func TestSubjects(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"status", StatusSubject("7"), "vigia.status.7"},
		{"event", EventSubject("7", 3), "vigia.events.7.3"},
		{"segment", SegmentSubject("7"), "vigia.segments.7"},
		{"snapshot", SnapshotSubject("7"), "vigia.snapshot.7"},
		{"kv put", kvSubject(BucketCameraStatus, "7"), "$KV.camera_status.7"},
		{"jobs", SubjectJobsExport, "vigia.jobs.export"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Fatalf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}

func TestStreamSubject(t *testing.T) {
	tests := []struct {
		name    string
		subject string
		want    bool
	}{
		{"event", "vigia.events.7.3", true},
		{"segment", "vigia.segments.7", true},
		{"jobs", "vigia.jobs.export", true},
		{"empty", "", false},
		{"status is core only", "vigia.status.7", false},
		{"bare prefix", "vigia.segments.", false},
		{"wildcard", "vigia.events.*.3", false},
		{"full wildcard", "vigia.events.>", false},
		{"empty token", "vigia.events.7..3", false},
		{"other jobs", "vigia.jobs.other", false},
		{"unrelated", "foo.bar", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := streamSubject(tt.subject); got != tt.want {
				t.Fatalf("streamSubject(%q) = %v, want %v", tt.subject, got, tt.want)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"token", "nats://s3cret@nats:4222", "nats://nats:4222"},
		{"user password", "nats://u:p4ss@nats:4222", "nats://nats:4222"},
		{"list", "nats://a:1@h1:4222, tls://h2:4222", "nats://h1:4222,tls://h2:4222"},
		{"no scheme", "h1:4222", "nats://h1:4222"},
		{"garbage", "nats://%zz@", "(invalid url)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redactURL(tt.in); got != tt.want {
				t.Fatalf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
