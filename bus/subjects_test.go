package bus

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/camera/cameratest"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/testenv"
)

// TestCameraIDRule: the registry, status, segment ends and segment notices
// take exactly the camera ids camera.ValidID accepts, and every such id
// works as a subject token and a key-value key of a real server.
func TestCameraIDRule(t *testing.T) {
	b := openTest(t, testOptions(t))
	ctx := testCtx(t)
	o := NewOutbox(b, 0, nil)
	t.Cleanup(o.Close)
	var mu sync.Mutex
	notified := map[string]bool{}
	stop, err := b.WatchSegments(func(n SegmentNotice) {
		mu.Lock()
		notified[n.Camera] = true
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	var valid []string
	for _, tc := range cameratest.IDCases() {
		want := camera.ValidID(tc.ID) == nil
		if want != tc.Valid {
			t.Fatalf("camera.ValidID(%q) valid = %v, the case says %v", tc.ID, want, tc.Valid)
		}
		check := func(what string, err error) {
			t.Helper()
			if want && err != nil || !want && !errors.Is(err, ErrInvalidCamera) {
				t.Fatalf("%s: %s(%q) = %v, want valid %v", tc.Name, what, tc.ID, err, want)
			}
		}
		rec := camera.Config{ID: tc.ID, ConnectionType: camera.RTMP, HistoryDays: 3}
		check("PutCamera", b.PutCamera(ctx, rec))
		got, ok, err := b.GetCamera(ctx, tc.ID)
		check("GetCamera", err)
		if want && (!ok || got != rec) {
			t.Fatalf("%s: GetCamera(%q) = %+v %v, want %+v", tc.Name, tc.ID, got, ok, rec)
		}
		check("EnqueueStatus", o.EnqueueStatus(status.Status{Camera: tc.ID, Code: status.Online}))
		check("PutSegmentEnd", b.PutSegmentEnd(ctx, tc.ID, SegmentEnd{EndMs: 1, Node: "n"}))
		_, ok, err = b.GetSegmentEnd(ctx, tc.ID)
		check("GetSegmentEnd", err)
		if want && !ok {
			t.Fatalf("%s: segment end of %q not found", tc.Name, tc.ID)
		}
		check("EnqueueSegment", o.EnqueueSegment(SegmentNotice{Camera: tc.ID, Key: "k-" + tc.Name}))
		if want {
			valid = append(valid, tc.ID)
		}
	}
	if err := o.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if o.Failed() != 0 {
		t.Fatalf("%d publishes refused by the server", o.Failed())
	}
	for _, id := range valid {
		s, ok, err := b.GetStatus(ctx, id)
		if err != nil || !ok || s.Camera != id {
			t.Fatalf("GetStatus(%q) = %+v %v %v", id, s, ok, err)
		}
	}
	testenv.WaitForNil(t, testWait, "a segment notice on each valid id's subject", func() error {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range valid {
			if !notified[id] {
				return fmt.Errorf("no notice for %q", id)
			}
		}
		return nil
	})
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
