package recorder

import (
	"context"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/testenv"
)

// memRegistry is an in-memory Registry; fail makes every read fail.
type memRegistry struct {
	mu   sync.Mutex
	cams map[string]camera.Config
	puts int
	fail bool
}

func (m *memRegistry) GetCamera(_ context.Context, id string) (camera.Config, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return camera.Config{}, false, errors.New("registry unreachable")
	}
	c, ok := m.cams[id]
	return c, ok, nil
}

func (m *memRegistry) ListCameras(context.Context) ([]camera.Config, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return nil, errors.New("registry unreachable")
	}
	var out []camera.Config
	for _, c := range m.cams {
		out = append(out, c)
	}
	return out, nil
}

func (m *memRegistry) PutCamera(_ context.Context, c camera.Config) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cams[c.ID] = c
	m.puts++
	return nil
}

// The retention days in effect for a camera: the record this node records
// it with, else the configuration, else the registry, else 0.
func TestRetentionDays(t *testing.T) {
	reg := &memRegistry{cams: map[string]camera.Config{
		"edited":  {ID: "edited", HistoryDays: 30},
		"other":   {ID: "other", HistoryDays: 5},
		"static1": {ID: "static1", HistoryDays: 9},
	}}
	rule := &Retention{Static: map[string]int{"static1": 3, "edited": 7}, Records: reg}
	rg := newRig(t)
	rg.rec.cfg.Retention = rule
	rule.rec.Store(rg.rec)
	c := cam("edited", "unsealable")
	c.HistoryDays = 14
	rg.rec.Record(c, 1)
	testenv.WaitFor(t, 5*time.Second, "the record in effect", func() bool {
		_, ok := rg.rec.Camera("edited")
		return ok
	})
	for _, tt := range []struct {
		name, id string
		want     int
	}{
		{"the record in effect, edited", "edited", 14},
		{"the configuration", "static1", 3},
		{"the registry", "other", 5},
		{"unknown", "none", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := rule.Days(t.Context(), tt.id); got != tt.want {
				t.Errorf("Days(%s) = %d, want %d", tt.id, got, tt.want)
			}
		})
	}
	if meta, tags := rule.Attrs(t.Context(), "edited"); meta[storage.MetaRetentionDays] != "14" || tags[storage.TagRetentionDays] != "14" {
		t.Errorf("attrs of the edited camera: %v %v, want 14 days", meta, tags)
	}
	if meta, tags := rule.Attrs(t.Context(), "none"); meta != nil || tags != nil {
		t.Errorf("attrs of an unknown camera: %v %v, want none", meta, tags)
	}
	reg.fail = true
	if got := rule.Days(t.Context(), "other"); got != 0 {
		t.Errorf("Days with the registry unreachable = %d, want 0", got)
	}
	var none *Retention
	if got := none.Days(t.Context(), "static1"); got != 0 {
		t.Errorf("Days without a rule = %d, want 0", got)
	}
}

// The static sweeper takes the configured cameras, then the registry's
// cameras that are neither those nor API cameras; the configured ones even
// when the registry cannot be read.
func TestStaticCameras(t *testing.T) {
	reg := &memRegistry{cams: map[string]camera.Config{
		"door":    {ID: "door", HistoryDays: 9},
		"synth-1": {ID: "synth-1", HistoryDays: 3},
		"4242":    {ID: "4242", HistoryDays: 1},
	}}
	rule := &Retention{Static: map[string]int{"door": 2, "yard": 5}, Records: reg}
	got := map[string]int{}
	if err := rule.StaticCameras(t.Context(), func(id string, days int) { got[id] = days }); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"door": 2, "yard": 5, "synth-1": 3}
	if !maps.Equal(got, want) {
		t.Errorf("static cameras %v, want %v", got, want)
	}
	reg.fail = true
	got = map[string]int{}
	if err := rule.StaticCameras(t.Context(), func(id string, days int) { got[id] = days }); err == nil || len(got) != 2 {
		t.Errorf("registry unreachable: %v, %v; want the error and the two configured cameras", got, err)
	}
}

// A static camera is written into the registry sealed, with its
// configured history_days, and not written again while its record and URL
// stay the same.
func TestRegisterStatic(t *testing.T) {
	reg := &memRegistry{cams: map[string]camera.Config{}}
	r := New(Config{Keys: testKeys, Registry: reg, Retention: &Retention{Static: map[string]int{"door": 4}}})
	defer r.Close()
	door := ingest.Camera{ID: "door", URL: "rtsp://u:p@10.0.0.1/a", Trusted: true}
	ctx := t.Context()
	if err := r.Register(ctx, door); err != nil {
		t.Fatal(err)
	}
	got := reg.cams["door"]
	if url, err := camera.Open(testKeys, got.SealedURL); err != nil || url != door.URL {
		t.Errorf("registered URL %q (%v), want %q", url, err, door.URL)
	}
	if strings.Contains(got.SealedURL, "u:p@") {
		t.Error("the registry holds the URL in the clear")
	}
	if got.HistoryDays != 4 || !got.Trusted || got.ConnectionType != camera.RTSP {
		t.Errorf("registered %+v", got)
	}
	if err := r.Register(ctx, door); err != nil || reg.puts != 1 {
		t.Errorf("registered again unchanged: %d puts, %v", reg.puts, err)
	}
	door.URL = "rtsp://u:p@10.0.0.1/b"
	if err := r.Register(ctx, door); err != nil || reg.puts != 2 {
		t.Errorf("a new URL not registered: %d puts, %v", reg.puts, err)
	}
}

// A record resolves to what the node records: its URL opened, a push
// camera to the push driver, a P2P camera to a p2p URL; an unsupported
// type or a URL that does not open is permanent.
func TestResolve(t *testing.T) {
	r := New(Config{Keys: testKeys})
	defer r.Close()
	pass, err := camera.Seal(testKeys, "secret")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name      string
		rec       camera.Config
		wantURL   string
		permanent bool
	}{
		{"rtsp", cam("c", "rtsp://h/x"), "rtsp://h/x", false},
		{"push", camera.Config{ID: "p", ConnectionType: camera.RTMP}, "rtmp-push:", false},
		{"p2p", camera.Config{ID: "q", ConnectionType: camera.P2P, P2PSerial: "SN1", P2PSealedPassword: pass}, "p2p://", false},
		{"unsealable", cam("u", "unsealable"), "", true},
		{"p2p password unsealable", camera.Config{ID: "q", ConnectionType: camera.P2P, P2PSerial: "SN1", P2PSealedPassword: "x"}, "", true},
		{"no url", camera.Config{ID: "n", ConnectionType: camera.RTSP}, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := r.resolve(tt.rec)
			if _, perm := ingest.IsPermanent(err); perm != tt.permanent {
				t.Fatalf("resolve: %v, want permanent %v", err, tt.permanent)
			}
			if err == nil && !strings.HasPrefix(spec.URL, tt.wantURL) {
				t.Errorf("URL %q, want %q…", spec.URL, tt.wantURL)
			}
		})
	}
}

// A segment the spool drops leaves a gap record: upload_failed when
// storage refused it, spool_quota otherwise.
func TestSegmentDropped(t *testing.T) {
	rg := newRig(t)
	seg := segmenter.Segment{Camera: "c1"}
	rg.rec.SegmentDropped(seg, "upload_failed")
	rg.rec.SegmentDropped(seg, "quota")
	got := rg.gapLog()
	if len(got) != 2 || got[0].Cause != status.CauseUploadFailed || got[1].Cause != status.CauseSpoolQuota || got[0].Node != "n1" {
		t.Errorf("gap records %+v", got)
	}
}

// A camera no node has room for gets an OFFLINE status saying so, from
// the node that would record it.
func TestUnplacedStatus(t *testing.T) {
	rg := newRig(t)
	rg.rec.Unplaced([]string{"c9"})
	rg.mu.Lock()
	defer rg.mu.Unlock()
	if len(rg.statuses) != 1 {
		t.Fatalf("statuses %+v, want one", rg.statuses)
	}
	s := rg.statuses[0]
	if s.Camera != "c9" || s.Code != status.Offline || s.LastError != unplacedError || s.Node != "n1" {
		t.Errorf("status %+v", s)
	}
}
