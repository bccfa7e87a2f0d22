package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefault(t *testing.T) {
	if _, err := defaults(); err != nil {
		t.Fatalf("default tags do not parse: %v", err)
	}
	c := Default()
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"data_dir", c.DataDir, "./data"},
		{"log.level", c.Log.Level, "info"},
		{"log.format", c.Log.Format, ""},
		{"http.addr", c.HTTP.Addr, "127.0.0.1:8080"},
		{"storage.backend", c.Storage.Backend, "fs"},
		{"storage.bucket", c.Storage.Bucket, "vigia"},
		{"storage.region", c.Storage.Region, "us-east-1"},
		{"storage.use_ssl", c.Storage.UseSSL, false},
		{"storage.signed_url_expiry", c.Storage.SignedURLExpiry.Duration(), 5 * time.Minute},
		{"nats.url", c.NATS.URL, ""},
		{"nats.listen", c.NATS.Listen, "127.0.0.1:4222"},
		{"recording.segment_duration", c.Recording.SegmentDuration.Duration(), 60 * time.Second},
		{"recording.fragment_duration", c.Recording.FragmentDuration.Duration(), time.Second},
		{"recording.spool_max_bytes", c.Recording.SpoolMaxBytes.Bytes(), int64(0)},
		{"recording.outage_budget", c.Recording.OutageBudget.Duration(), 10 * time.Minute},
		{"recording.camera_bitrate_mbps", c.Recording.CameraBitrateMbps, 2.0},
		{"recording.max_cameras", c.Recording.MaxCameras, 0},
		{"recording.upload_concurrency", c.Recording.UploadConcurrency, 4},
		{"ingest.read_timeout", c.Ingest.ReadTimeout.Duration(), 10 * time.Second},
		{"ingest.connect_rate", c.Ingest.ConnectRate, 200.0},
		{"ingest.allow_private_networks", c.Ingest.AllowPrivateNetworks, false},
		{"ingest.default_transport", c.Ingest.DefaultTransport, "tcp"},
		{"synth.cameras", c.Synth.Cameras, 0},
		{"synth.codec", c.Synth.Codec, "h264"},
		{"cameras", len(c.Cameras), 0},
	}
	for _, ch := range checks {
		t.Run(ch.name, func(t *testing.T) {
			if ch.got != ch.want {
				t.Errorf("got %v, want %v", ch.got, ch.want)
			}
		})
	}
}

func TestLoadDefaultsResolveAndValidate(t *testing.T) {
	dir := t.TempDir()
	c, err := Load([]string{"--data_dir", dir}, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	host, _ := os.Hostname()
	checks := []struct{ name, got, want string }{
		{"node_id", c.NodeID, host},
		{"http.public_url", c.HTTP.PublicURL, "http://127.0.0.1:8080"},
		{"storage.path", c.Storage.Path, filepath.Join(dir, "storage")},
		{"recording.spool_dir", c.Recording.SpoolDir, filepath.Join(dir, "spool")},
		{"nats.store_dir", c.NATS.StoreDir, filepath.Join(dir, "nats")},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %q, want %q", ch.name, ch.got, ch.want)
		}
	}
}

func TestResolve(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		edit      func(c *Config)
		publicURL string
		storage   string
		dataDir   string
	}{
		{"relative data_dir", func(c *Config) { c.DataDir = "rel" }, "http://127.0.0.1:8080",
			filepath.Join(wd, "rel", "storage"), filepath.Join(wd, "rel")},
		{"relative storage.path", func(c *Config) { c.DataDir = "/d"; c.Storage.Path = "st" }, "http://127.0.0.1:8080",
			filepath.Join(wd, "st"), "/d"},
		{"all interfaces", func(c *Config) { c.DataDir = "/d"; c.HTTP.Addr = "0.0.0.0:9000" }, "http://localhost:9000",
			"/d/storage", "/d"},
		{"no host", func(c *Config) { c.DataDir = "/d"; c.HTTP.Addr = ":9000" }, "http://localhost:9000",
			"/d/storage", "/d"},
		{"explicit public_url", func(c *Config) { c.DataDir = "/d"; c.HTTP.PublicURL = "https://x" }, "https://x",
			"/d/storage", "/d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Default()
			tt.edit(c)
			if err := c.Resolve(); err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if c.HTTP.PublicURL != tt.publicURL || c.Storage.Path != tt.storage || c.DataDir != tt.dataDir {
				t.Errorf("got public_url %q storage.path %q data_dir %q; want %q %q %q",
					c.HTTP.PublicURL, c.Storage.Path, c.DataDir, tt.publicURL, tt.storage, tt.dataDir)
			}
			before := *c
			if err := c.Resolve(); err != nil || c.Storage.Path != before.Storage.Path || c.DataDir != before.DataDir {
				t.Errorf("second Resolve changed the result: %v", err)
			}
		})
	}
}

// TestLoadPrecedence checks defaults < file < environment < flags, for each
// kind of value.
func TestLoadPrecedence(t *testing.T) {
	file := writeConfig(t, `
http: {addr: "127.0.0.1:1001"}
recording: {spool_max_bytes: 1GiB, segment_duration: 30s}
ingest: {allow_private_networks: true, connect_rate: 5}
`)
	type result struct {
		addr    string
		spool   Size
		segment time.Duration
		private bool
		rate    float64
	}
	tests := []struct {
		name string
		args []string
		env  []string
		want result
	}{
		{"defaults", nil, nil, result{"127.0.0.1:8080", 0, time.Minute, false, 200}},
		{"file overrides defaults", []string{"--config", file}, nil,
			result{"127.0.0.1:1001", 1 << 30, 30 * time.Second, true, 5}},
		{"config file from env", nil, []string{"VIGIA_CONFIG=" + file},
			result{"127.0.0.1:1001", 1 << 30, 30 * time.Second, true, 5}},
		{"env overrides file", []string{"--config", file}, []string{
			"VIGIA_HTTP_ADDR=127.0.0.1:1002", "VIGIA_RECORDING_SPOOL_MAX_BYTES=512MiB",
			"VIGIA_RECORDING_SEGMENT_DURATION=45s", "VIGIA_INGEST_ALLOW_PRIVATE_NETWORKS=false",
			"VIGIA_INGEST_CONNECT_RATE=0.5",
		}, result{"127.0.0.1:1002", 512 << 20, 45 * time.Second, false, 0.5}},
		{"empty env is unset", []string{"--config", file}, []string{"VIGIA_HTTP_ADDR="},
			result{"127.0.0.1:1001", 1 << 30, 30 * time.Second, true, 5}},
		{"later env entry wins", nil, []string{"VIGIA_HTTP_ADDR=127.0.0.1:1", "VIGIA_HTTP_ADDR=127.0.0.1:2"},
			result{"127.0.0.1:2", 0, time.Minute, false, 200}},
		{"flag overrides env", []string{
			"--config", file, "--http.addr", "127.0.0.1:1003", "--recording.spool_max_bytes=10MB",
			"--recording.segment_duration", "2m", "--ingest.allow_private_networks", "--ingest.connect_rate=7",
		}, []string{
			"VIGIA_HTTP_ADDR=127.0.0.1:1002", "VIGIA_RECORDING_SPOOL_MAX_BYTES=512MiB",
			"VIGIA_RECORDING_SEGMENT_DURATION=45s", "VIGIA_INGEST_ALLOW_PRIVATE_NETWORKS=false",
			"VIGIA_INGEST_CONNECT_RATE=0.5",
		}, result{"127.0.0.1:1003", 10_000_000, 2 * time.Minute, true, 7}},
		{"unrelated VIGIA variables ignored", nil, []string{"VIGIA_TOOLS=/opt/tools", "VIGIA_HTTP=x", "HTTP_ADDR=x"},
			result{"127.0.0.1:8080", 0, time.Minute, false, 200}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--data_dir", t.TempDir()}, tt.args...)
			c, err := Load(args, tt.env)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			got := result{c.HTTP.Addr, c.Recording.SpoolMaxBytes, c.Recording.SegmentDuration.Duration(),
				c.Ingest.AllowPrivateNetworks, c.Ingest.ConnectRate}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	bad := writeConfig(t, "storage:\n  bucketz: x\n")
	tests := []struct {
		name  string
		args  []string
		env   []string
		want  error
		parts []string
	}{
		{"bad env duration", nil, []string{"VIGIA_RECORDING_SEGMENT_DURATION=6x"}, ErrInvalidDuration,
			[]string{`config: recording.segment_duration: invalid duration "6x"`, "VIGIA_RECORDING_SEGMENT_DURATION"}},
		{"bad env size", nil, []string{"VIGIA_RECORDING_SPOOL_MAX_BYTES=2QB"}, ErrInvalidSize,
			[]string{`config: recording.spool_max_bytes: invalid size "2QB"`}},
		{"bad env bool", nil, []string{"VIGIA_STORAGE_USE_SSL=maybe"}, ErrInvalidValue,
			[]string{"storage.use_ssl", `"maybe"`}},
		{"bad env int", nil, []string{"VIGIA_RECORDING_UPLOAD_CONCURRENCY=four"}, ErrInvalidValue,
			[]string{"recording.upload_concurrency"}},
		{"bad flag duration", []string{"--recording.segment_duration", "6x"}, nil, ErrInvalidDuration,
			[]string{`config: recording.segment_duration: invalid duration "6x"`, "flag --recording.segment_duration"}},
		{"bad flag size", []string{"--recording.spool_max_bytes=huge"}, nil, ErrInvalidSize,
			[]string{"recording.spool_max_bytes"}},
		{"unknown flag", []string{"--storage.bucketz", "x"}, nil, nil, []string{"storage.bucketz"}},
		{"stray argument", []string{"extra"}, nil, ErrInvalidValue, []string{`"extra"`}},
		{"help", []string{"-h"}, nil, flag.ErrHelp, nil},
		{"missing file", []string{"--config", "/nonexistent/vigia.yaml"}, nil, os.ErrNotExist, nil},
		{"unknown key in file", []string{"--config", bad}, nil, ErrUnknownKey,
			[]string{`config: unknown key "storage.bucketz" (line 2)`}},
		{"validation", []string{"--storage.backend", "gcs"}, nil, ErrInvalidValue, []string{"storage.backend", `"gcs"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--data_dir", t.TempDir()}, tt.args...)
			c, err := Load(args, tt.env)
			if c != nil {
				t.Errorf("Load returned a config with an error")
			}
			checkErr(t, err, tt.want, tt.parts...)
		})
	}
}

func TestRegisterFlags(t *testing.T) {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	f := RegisterFlags(fs)
	for _, k := range Keys() {
		if k.Flag == "" {
			continue
		}
		fl := fs.Lookup(k.Flag)
		if fl == nil {
			t.Errorf("no flag for %s", k.Path)
			continue
		}
		if fl.DefValue != k.Default {
			t.Errorf("flag %s default %q, want %q", k.Flag, fl.DefValue, k.Default)
		}
	}
	if err := fs.Parse([]string{"--config", "x.yaml", "--synth.cameras", "3", "--synth.cameras", "5"}); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if f.File() != "x.yaml" {
		t.Errorf("File() = %q", f.File())
	}
	c := Default()
	if err := f.Apply(c); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if c.Synth.Cameras != 5 {
		t.Errorf("synth.cameras = %d, want the last value 5", c.Synth.Cameras)
	}
	if fs.Lookup("cameras") != nil {
		t.Errorf("lists must not have a flag")
	}
	var usage strings.Builder
	fs.SetOutput(&usage)
	fs.PrintDefaults()
	for _, want := range []string{"-http.addr", "VIGIA_HTTP_ADDR", "-config file", "(default 1MiB)"} {
		if !strings.Contains(usage.String(), want) {
			t.Errorf("usage lacks %q", want)
		}
	}
}

func TestLogFormatOr(t *testing.T) {
	tests := []struct {
		name, format, def, want string
	}{
		{"unset uses default", "", "console", "console"},
		{"set wins", "json", "console", "json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (LogConfig{Format: tt.format}).FormatOr(tt.def); got != tt.want {
				t.Errorf("FormatOr = %q, want %q", got, tt.want)
			}
		})
	}
}
