package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/testenv"
)

// doctorConfig is a node configuration on fs storage in a temporary
// directory, with NATS at natsURL.
func doctorConfig(t *testing.T, natsURL string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Load([]string{"--data_dir", dir, "--nats.url", natsURL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// healthyDeps are the real lookups with a synchronized clock.
func healthyDeps() doctorDeps {
	d := systemDoctorDeps()
	d.clockSynced = func() (bool, bool) { return true, true }
	return d
}

// problems returns the PROBLEM lines of a doctor report.
func problems(out string) []string {
	var p []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "PROBLEM") {
			p = append(p, line)
		}
	}
	return p
}

func startNATS(t *testing.T) *bus.Bus {
	t.Helper()
	b, err := bus.Open(context.Background(), bus.Options{Listen: "127.0.0.1:0"}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func TestDoctorHealthy(t *testing.T) {
	b := startNATS(t)
	var out bytes.Buffer
	n := doctor(context.Background(), doctorConfig(t, b.ClientURL()), healthyDeps(), &out)
	if n != 0 {
		t.Fatalf("%d problems on a healthy node:\n%s", n, out.String())
	}
	for _, area := range []string{"ffmpeg", "storage", "nats", "clock", "spool"} {
		if !strings.Contains(out.String(), "ok       "+area+":") {
			t.Errorf("no ok line for %s:\n%s", area, out.String())
		}
	}
}

// TestDoctorNATSStopped: with NATS stopped, doctor says so in one line and
// nothing else is a problem.
func TestDoctorNATSStopped(t *testing.T) {
	b := startNATS(t)
	u := b.ClientURL()
	b.Close()
	var out bytes.Buffer
	n := doctor(context.Background(), doctorConfig(t, u), healthyDeps(), &out)
	p := problems(out.String())
	if n != 1 || len(p) != 1 {
		t.Fatalf("%d problems, want 1 (nats):\n%s", n, out.String())
	}
	if !strings.HasPrefix(p[0], "PROBLEM  nats: cannot reach "+u) || !strings.Contains(p[0], "is the NATS server running") {
		t.Errorf("nats line: %q", p[0])
	}
}

// TestDoctorCommand runs `vigia doctor` as the command line does: a
// stopped NATS makes it exit 1 with the problem on stdout.
func TestDoctorCommand(t *testing.T) {
	port := testenv.FreePort(t)
	var stdout, stderr bytes.Buffer
	code := run([]string{"doctor", "--data_dir", t.TempDir(), "--nats.url", fmt.Sprintf("nats://127.0.0.1:%d", port)}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("PROBLEM  nats: cannot reach nats://127.0.0.1:%d", port)) {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "problem(s) found") {
		t.Errorf("stderr: %q", stderr.String())
	}
}

// TestDoctorFFmpeg: a build without the decoder on a machine where the
// FFmpeg libraries cannot be found (pkg-config pointed at an empty
// directory, no shared library in the searched directories) is one line.
func TestDoctorFFmpeg(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PKG_CONFIG_LIBDIR", empty)
	t.Setenv("PKG_CONFIG_PATH", "")
	libs := t.TempDir()
	if err := os.WriteFile(filepath.Join(libs, "libavcodec.so.59"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		libDirs  []string
		decoder  bool
		decodeOK bool
		want     []string
	}{
		{name: "no libraries", libDirs: []string{empty}, want: []string{"built without cgo", "not installed (libavcodec, libswscale, libavutil not found)", "pkg-config libavcodec-dev"}},
		{name: "some libraries", libDirs: []string{libs}, want: []string{"not installed (libswscale, libavutil not found)"}},
		{name: "decoder fails", decoder: true, want: []string{"linked but cannot decode"}},
		{name: "decoder works", decoder: true, decodeOK: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := healthyDeps()
			d.decoderAvailable = tc.decoder
			d.tryDecode = func() error {
				if tc.decodeOK {
					return nil
				}
				return fmt.Errorf("avcodec_send_packet: Invalid data")
			}
			d.findLib = func(name string) string { return findLibIn(tc.libDirs, name) }
			f := checkFFmpeg(context.Background(), d)
			if tc.want == nil {
				if !f.ok {
					t.Errorf("problem: %s", f.msg)
				}
				return
			}
			if f.ok {
				t.Fatalf("ok: %s", f.msg)
			}
			if strings.Contains(f.msg, "\n") || !strings.HasPrefix(f.msg, "ffmpeg: ") {
				t.Errorf("not one ffmpeg line: %q", f.msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(f.msg, w) {
					t.Errorf("%q does not say %q", f.msg, w)
				}
			}
		})
	}
	// pkg-config itself, pointed at nothing, fails; on its usual path it
	// finds the development files installed here (make deps).
	if _, err := runPkgConfig(context.Background(), ffmpegLibs...); err == nil {
		t.Errorf("pkg-config found FFmpeg in an empty PKG_CONFIG_LIBDIR")
	}
	t.Setenv("PKG_CONFIG_LIBDIR", "")
	if err := os.Unsetenv("PKG_CONFIG_LIBDIR"); err != nil {
		t.Fatal(err)
	}
	if v, err := runPkgConfig(context.Background(), ffmpegLibs...); err != nil || !strings.Contains(v, "libavcodec ") {
		t.Errorf("pkg-config on the system: %q, %v", v, err)
	}
	// The real decoder of this build decodes the test keyframes.
	if d := systemDoctorDeps(); d.decoderAvailable {
		if err := d.tryDecode(); err != nil {
			t.Errorf("decoder: %v", err)
		}
	}
}

func TestDoctorClock(t *testing.T) {
	offset := time.Hour
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(offset).UTC().Format(http.TimeFormat))
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	st, err := fs.New(t.TempDir(), fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Storage.Backend, cfg.Storage.Endpoint = "s3", srv.URL
	d := healthyDeps()
	if f := checkClock(context.Background(), cfg, st, d); f.ok || !strings.Contains(f.msg, "1h0m0s off the storage server") {
		t.Errorf("skewed clock: %+v", f)
	}
	offset = 0
	if f := checkClock(context.Background(), cfg, st, d); !f.ok {
		t.Errorf("same clock: %+v", f)
	}
	cfg.Storage.Backend = "fs"
	d.clockSynced = func() (bool, bool) { return false, true }
	if f := checkClock(context.Background(), cfg, st, d); f.ok || !strings.Contains(f.msg, "not synchronized") {
		t.Errorf("unsynchronized kernel clock: %+v", f)
	}
	d.now = func() time.Time { return time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC) }
	if f := checkClock(context.Background(), cfg, st, d); f.ok || !strings.Contains(f.msg, "1970") {
		t.Errorf("clock in 1970: %+v", f)
	}
}

func TestDoctorSpool(t *testing.T) {
	cfg := doctorConfig(t, "nats://127.0.0.1:1")
	d := healthyDeps()
	d.freeBytes = func(string) (uint64, error) { return 1 << 30, nil }
	cfg.Recording.SpoolMaxBytes = 2 << 30
	f := checkSpool(cfg, d)
	if f.ok || !strings.Contains(f.msg, "only 1.0 GiB free") || !strings.Contains(f.msg, "recording.spool_max_bytes (2.0 GiB)") {
		t.Errorf("small disk: %+v", f)
	}
	// A derived quota fits the disk: 1 GiB holds the 10-minute outage
	// budget of 5 cameras at 2 Mbit/s, 100 MB not one camera's.
	cfg.Recording.SpoolMaxBytes = 0
	if f := checkSpool(cfg, d); !f.ok || !strings.Contains(f.msg, "5 cameras, bound: spool_disk") {
		t.Errorf("derived quota on a small disk: %+v", f)
	}
	d.freeBytes = func(string) (uint64, error) { return 100e6, nil }
	if f := checkSpool(cfg, d); f.ok || !strings.Contains(f.msg, "not the outage budget of one camera") {
		t.Errorf("disk for no camera: %+v", f)
	}
	d = healthyDeps()
	if f := checkSpool(cfg, d); !f.ok {
		t.Errorf("temp dir: %+v", f)
	}
	// A spool directory under a file cannot be created.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Recording.SpoolDir = filepath.Join(file, "spool")
	if f := checkSpool(cfg, d); f.ok {
		t.Errorf("spool under a file: %+v", f)
	}
}
