package config

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

func TestLoadYAMLErrors(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		want  error
		parts []string
	}{
		{"unknown top-level key", "data_dir: x\nnodeid: y\n", ErrUnknownKey,
			[]string{`config: unknown key "nodeid" (line 2)`}},
		{"unknown nested key", "data_dir: x\nstorage:\n  backend: fs\n  bucketz: v\n", ErrUnknownKey,
			[]string{`config: unknown key "storage.bucketz" (line 4)`}},
		{"unknown camera key", "cameras:\n  - id: a\n    url: rtsp://h/\n    fps: 5\n", ErrUnknownKey,
			[]string{`config: unknown key "cameras[0].fps" (line 4)`}},
		{"duplicate key", "http:\n  addr: a:1\n  addr: b:2\n", ErrDuplicateKey,
			[]string{`"http.addr" (line 3)`}},
		{"bad duration", "recording:\n  segment_duration: 6x\n", ErrInvalidDuration,
			[]string{`config: recording.segment_duration: invalid duration "6x"`, "line 2"}},
		{"bad size", "recording:\n  spool_max_bytes: 2QB\n", ErrInvalidSize,
			[]string{`config: recording.spool_max_bytes: invalid size "2QB"`, "line 2"}},
		{"bad integer", "recording: {upload_concurrency: 1.5}\n", ErrInvalidValue,
			[]string{"recording.upload_concurrency", `"1.5"`}},
		{"bad camera integer", "cameras:\n  - {id: a, sound: yes}\n", ErrInvalidValue,
			[]string{"cameras[0].sound"}},
		{"mapping for scalar", "data_dir: {a: b}\n", ErrWrongShape,
			[]string{"data_dir", "want a string, got a mapping"}},
		{"scalar for section", "storage: s3\n", ErrWrongShape,
			[]string{"storage", "want a mapping, got a scalar"}},
		{"mapping for list", "cameras: {id: a}\n", ErrWrongShape,
			[]string{"cameras", "want a list"}},
		{"not a mapping", "- a\n- b\n", ErrWrongShape, []string{"must be a mapping"}},
		{"bad yaml", "http: [\n", nil, []string{"config: parse file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Default().LoadYAML([]byte(tt.yaml))
			checkErr(t, err, tt.want, tt.parts...)
		})
	}
}

func TestLoadYAMLValues(t *testing.T) {
	c := Default()
	err := c.LoadYAML([]byte(`
node_id: n1
storage:
  backend: s3
  path:          # null keeps the default
  use_ssl: true
recording:
  fragment_duration: 500ms
  spool_max_bytes: 1048576
ingest: {connect_rate: 2.5}
defaults: &cam
  history_days: 30
  transport: udp
`))
	checkErr(t, err, ErrUnknownKey, `"defaults"`)

	c = Default()
	err = c.LoadYAML([]byte(`
node_id: n1
storage:
  backend: s3
  path:
  use_ssl: true
recording:
  fragment_duration: 500ms
  spool_max_bytes: 1048576
ingest: {connect_rate: 2.5}
cameras:
  - &cam {id: "7", url: "rtsp://u:p@127.0.0.1:8554/h264", transport: udp, history_days: 30}
  - {<<: *cam, id: "8", sound: 1}
  - {id: "9", url: "rtmp://h/live/9"}
`))
	if err != nil {
		t.Fatalf("LoadYAML: %v", err)
	}
	if c.NodeID != "n1" || c.Storage.Backend != "s3" || !c.Storage.UseSSL || c.Storage.Path != "" ||
		c.Storage.Bucket != "vigia" || c.Recording.FragmentDuration.Duration() != 500*time.Millisecond ||
		c.Recording.SpoolMaxBytes != 1<<20 || c.Ingest.ConnectRate != 2.5 {
		t.Errorf("unexpected values: %+v", c)
	}
	want := []Camera{
		{ID: "7", URL: "rtsp://u:p@127.0.0.1:8554/h264", Transport: "udp", HistoryDays: 30},
		{ID: "8", URL: "rtsp://u:p@127.0.0.1:8554/h264", Transport: "udp", Sound: 1, HistoryDays: 30},
		{ID: "9", URL: "rtmp://h/live/9", HistoryDays: 7},
	}
	if len(c.Cameras) != len(want) {
		t.Fatalf("got %d cameras, want %d", len(c.Cameras), len(want))
	}
	for i := range want {
		if c.Cameras[i] != want[i] {
			t.Errorf("camera %d = %+v, want %+v", i, c.Cameras[i], want[i])
		}
	}
}

func TestLoadYAMLEmpty(t *testing.T) {
	tests := []struct {
		name string
		yaml string
	}{
		{"empty", ""},
		{"comment only", "# nothing\n"},
		{"null document", "~\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			if err := c.LoadYAML([]byte(tt.yaml)); err != nil {
				t.Fatalf("LoadYAML: %v", err)
			}
			if !reflect.DeepEqual(c, Default()) {
				t.Errorf("empty document changed the defaults")
			}
		})
	}
}

func TestLoadFileMissing(t *testing.T) {
	err := Default().LoadFile("/nonexistent/vigia.yaml")
	if err == nil || errors.Is(err, ErrUnknownKey) {
		t.Fatalf("err = %v, want a read error", err)
	}
}

// TestYAMLRoundTrip checks that a printed configuration loads back to the
// same values.
func TestYAMLRoundTrip(t *testing.T) {
	c := validConfig(t)
	c.Recording.SpoolMaxBytes = 10_000_000
	c.Ingest.ConnectRate = 0.5
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	back := Default()
	if err := back.LoadYAML(out); err != nil {
		t.Fatalf("LoadYAML of printed config: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(back, c) {
		t.Errorf("round trip changed the config:\n got %+v\nwant %+v", back, c)
	}
}
