package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/recorder"
	"github.com/vigia/vigia/segmenter"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/thumbs/decoder"
)

// maxClockSkew is the largest difference with the storage server's clock
// doctor accepts. Segment times come from each node's clock, so nodes that
// disagree leave gaps or overlaps at a handover.
const maxClockSkew = 2 * time.Second

// ffmpegLibs are the FFmpeg libraries the thumbnail decoder links.
var ffmpegLibs = []string{"libavcodec", "libswscale", "libavutil"}

// doctorDeps are what the checks look at outside the configuration, so
// tests can make each lookup fail.
type doctorDeps struct {
	// decoderAvailable reports whether this build links FFmpeg (cgo).
	decoderAvailable bool
	// tryDecode decodes a known keyframe of each codec.
	tryDecode func() error
	// pkgConfig runs pkg-config --modversion on the modules.
	pkgConfig func(ctx context.Context, modules ...string) (string, error)
	// findLib returns the path of a shared library (libavcodec), "" when
	// the dynamic linker would not find it.
	findLib func(name string) string
	// now is the local clock.
	now func() time.Time
	// clockSynced reports whether the kernel considers the clock
	// synchronized (NTP); known is false where it cannot tell.
	clockSynced func() (synced, known bool)
	// statfs returns the bytes available to this user on dir's file system.
	freeBytes func(dir string) (uint64, error)
}

// systemDoctorDeps are the real lookups.
func systemDoctorDeps() doctorDeps {
	return doctorDeps{
		decoderAvailable: decoder.Available(),
		tryDecode:        tryDecoder,
		pkgConfig:        runPkgConfig,
		findLib:          findSharedLib,
		now:              time.Now,
		clockSynced:      kernelClockSynced,
		freeBytes:        freeBytes,
	}
}

// finding is the outcome of one check.
type finding struct {
	ok  bool
	msg string // "area: plain words"
}

// runDoctor implements `vigia doctor`: it checks what a node needs and
// prints one line per check, PROBLEM lines saying what is wrong.
func runDoctor(args []string, stdout io.Writer) error {
	cfg, err := config.Load(args, os.Environ())
	if err != nil {
		fmt.Fprintf(stdout, "PROBLEM  config: %v\n", err)
		return errors.New("1 problem found")
	}
	n := doctor(context.Background(), cfg, systemDoctorDeps(), stdout)
	if n > 0 {
		return fmt.Errorf("%d problem(s) found", n)
	}
	return nil
}

// doctor runs every check and returns the number of problems.
func doctor(ctx context.Context, cfg *config.Config, d doctorDeps, w io.Writer) int {
	var all []finding
	all = append(all, checkFFmpeg(ctx, d))
	st, storeFinding := checkStorage(ctx, cfg)
	all = append(all, storeFinding)
	all = append(all, checkNATS(ctx, cfg))
	all = append(all, checkClock(ctx, cfg, st, d))
	all = append(all, checkSpool(cfg, d))
	problems := 0
	for _, f := range all {
		if f.ok {
			fmt.Fprintf(w, "ok       %s\n", f.msg)
		} else {
			problems++
			fmt.Fprintf(w, "PROBLEM  %s\n", f.msg)
		}
	}
	return problems
}

// checkFFmpeg checks that thumbnails, snapshots and motion can decode video.
func checkFFmpeg(ctx context.Context, d doctorDeps) finding {
	if d.decoderAvailable {
		if err := d.tryDecode(); err != nil {
			return finding{false, fmt.Sprintf("ffmpeg: the FFmpeg libraries are linked but cannot decode a test keyframe: %v", err)}
		}
		return finding{true, "ffmpeg: libavcodec decodes H.264 and H.265 (thumbnails, snapshots and motion work)"}
	}
	var missing []string
	for _, l := range ffmpegLibs {
		if d.findLib(l) == "" {
			missing = append(missing, l)
		}
	}
	msg := "ffmpeg: this vigia was built without cgo, so thumbnails, snapshots and motion detection are off"
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ver, err := d.pkgConfig(pctx, ffmpegLibs...)
	switch {
	case len(missing) > 0:
		msg += fmt.Sprintf("; the FFmpeg libraries are not installed (%s not found): install ffmpeg (or libavcodec59 libswscale6 libavutil57)", strings.Join(missing, ", "))
		if err != nil {
			msg += " and, to build, pkg-config libavcodec-dev libswscale-dev libavutil-dev"
		}
	case err != nil:
		msg += fmt.Sprintf("; pkg-config does not find the FFmpeg development files (%v): install pkg-config libavcodec-dev libswscale-dev libavutil-dev, then build with CGO_ENABLED=1", err)
	default:
		msg += fmt.Sprintf("; FFmpeg %s is installed: build with CGO_ENABLED=1", ver)
	}
	return finding{false, msg}
}

// tryDecoder decodes the first keyframe of the small synthetic clips.
func tryDecoder() error {
	for _, c := range []struct {
		name  string
		codec media.Codec
	}{{synth.CodecH264, media.H264}, {synth.CodecH265, media.H265}} {
		clip, err := synth.Fixture(c.name, true)
		if err != nil {
			return err
		}
		dec, err := decoder.New(c.codec, decoder.Options{})
		if err != nil {
			return err
		}
		ok, err := dec.DecodeStill(clip.Units[0].NALUs)
		dec.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if !ok {
			return fmt.Errorf("%s: no picture from a keyframe", c.name)
		}
	}
	return nil
}

// runPkgConfig returns the versions pkg-config reports for modules.
func runPkgConfig(ctx context.Context, modules ...string) (string, error) {
	bin, err := exec.LookPath("pkg-config")
	if err != nil {
		return "", errors.New("pkg-config is not installed")
	}
	out, err := exec.CommandContext(ctx, bin, append([]string{"--modversion"}, modules...)...).CombinedOutput()
	if err != nil {
		first := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
		if first == "" {
			first = err.Error()
		}
		return "", errors.New(first)
	}
	var parts []string
	for i, v := range strings.Fields(string(out)) {
		if i < len(modules) {
			parts = append(parts, modules[i]+" "+v)
		}
	}
	return strings.Join(parts, ", "), nil
}

// libDirs are where the dynamic linker looks on Debian and most Linux
// systems, after LD_LIBRARY_PATH.
var libDirs = []string{"/lib", "/usr/lib", "/lib64", "/usr/lib64", "/usr/local/lib",
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"}

// findSharedLib looks for name.so.* where the dynamic linker would.
func findSharedLib(name string) string {
	dirs := filepath.SplitList(os.Getenv("LD_LIBRARY_PATH"))
	return findLibIn(append(dirs, libDirs...), name)
}

// findLibIn returns the first dir/name.so* found.
func findLibIn(dirs []string, name string) string {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if m, _ := filepath.Glob(filepath.Join(d, name+".so*")); len(m) > 0 {
			return m[0]
		}
	}
	return ""
}

// checkStorage opens the configured store, which pings it (an S3 bucket is
// created when missing).
func checkStorage(ctx context.Context, cfg *config.Config) (storage.Store, finding) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := app.OpenStore(ctx, cfg, zap.NewNop())
	if err != nil {
		where := cfg.Storage.Endpoint
		if cfg.Storage.Backend == "fs" {
			where = cfg.Storage.Path
		}
		return nil, finding{false, fmt.Sprintf("storage: %s %s cannot be used: %v", cfg.Storage.Backend, where, oneLine(err))}
	}
	return st, finding{true, "storage: " + st.Describe() + " answers"}
}

// checkNATS connects to nats.url; with the embedded server (nats.url
// empty) it checks that a running node answers on nats.listen or that the
// address is free for one.
func checkNATS(ctx context.Context, cfg *config.Config) finding {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	open := func(u string) error {
		b, err := bus.Open(ctx, bus.Options{URL: u, Token: cfg.NATS.Token, Name: "vigia-doctor", ConnectTimeout: 3 * time.Second}, zap.NewNop())
		if err != nil {
			return err
		}
		defer b.Close()
		return b.Ping(ctx)
	}
	if cfg.NATS.URL != "" {
		if err := open(cfg.NATS.URL); err != nil {
			return finding{false, fmt.Sprintf("nats: cannot reach %s: is the NATS server running, and nats.url and nats.token right? (%v)", redactNATS(cfg.NATS.URL), oneLine(err))}
		}
		return finding{true, "nats: " + redactNATS(cfg.NATS.URL) + " answers, JetStream buckets and streams in place"}
	}
	if err := open("nats://" + cfg.NATS.Listen); err == nil {
		return finding{true, "nats: embedded (nats.url empty); the server of a running node answers on " + cfg.NATS.Listen}
	}
	l, err := net.Listen("tcp", cfg.NATS.Listen)
	if err != nil {
		return finding{false, fmt.Sprintf("nats: embedded (nats.url empty) but nats.listen %s cannot be used: %v", cfg.NATS.Listen, oneLine(err))}
	}
	_ = l.Close()
	return finding{true, "nats: embedded (nats.url empty); nats.listen " + cfg.NATS.Listen + " is free"}
}

// checkClock compares the local clock with the S3 server's (the Date of
// its answer); without one, it asks the kernel whether NTP keeps the clock
// synchronized.
func checkClock(ctx context.Context, cfg *config.Config, store storage.Store, d doctorDeps) finding {
	now := d.now()
	if now.Year() < 2024 {
		return finding{false, fmt.Sprintf("clock: the clock says %s: set it (and run NTP)", now.UTC().Format(time.RFC3339))}
	}
	synced, known := d.clockSynced()
	if cfg.Storage.Backend == "s3" && store != nil {
		skew, err := serverSkew(ctx, s3BaseURL(cfg), d.now)
		if err == nil {
			if skew > maxClockSkew || skew < -maxClockSkew {
				return finding{false, fmt.Sprintf("clock: this machine's clock is %s off the storage server's: run NTP on both (recording times and presigned URLs depend on it)", skew.Round(time.Second))}
			}
			return finding{true, fmt.Sprintf("clock: within %s of the storage server's", maxClockSkew)}
		}
	}
	if known && !synced {
		return finding{false, "clock: the kernel reports the clock as not synchronized: run chrony or systemd-timesyncd (recording times come from this clock)"}
	}
	if !known {
		return finding{true, "clock: " + now.UTC().Format(time.RFC3339) + " (synchronization unknown)"}
	}
	return finding{true, "clock: synchronized (kernel NTP status)"}
}

// s3BaseURL is the URL of the S3 endpoint.
func s3BaseURL(cfg *config.Config) string {
	e := cfg.Storage.Endpoint
	if strings.Contains(e, "://") {
		return e
	}
	if cfg.Storage.UseSSL {
		return "https://" + e
	}
	return "http://" + e
}

// serverSkew returns the server's clock minus ours, from the Date header
// of an unauthenticated request (answered with an error, but dated).
func serverSkew(ctx context.Context, base string, now func() time.Time) (time.Duration, error) {
	u, err := url.Parse(base)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u.String(), nil)
	if err != nil {
		return 0, err
	}
	sent := now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_ = res.Body.Close()
	mid := sent.Add(now().Sub(sent) / 2)
	date, err := http.ParseTime(res.Header.Get("Date"))
	if err != nil {
		return 0, fmt.Errorf("no Date header: %w", err)
	}
	// Date has whole seconds: compare with our time truncated the same way.
	return date.Sub(mid.Truncate(time.Second)), nil
}

// checkSpool checks that the spool directory can be written and that its
// file system has room for recording.spool_max_bytes and the open
// segments of the node's cameras.
func checkSpool(cfg *config.Config, d doctorDeps) finding {
	dir := cfg.Recording.SpoolDir
	existing := segmenter.ExistingDir(dir)
	if existing == dir {
		f, err := os.CreateTemp(dir, ".doctor-*")
		if err != nil {
			return finding{false, fmt.Sprintf("spool: cannot write in recording.spool_dir %s: %v", dir, oneLine(err))}
		}
		_ = f.Close()
		_ = os.Remove(f.Name())
	} else if err := writableDir(existing); err != nil {
		return finding{false, fmt.Sprintf("spool: recording.spool_dir %s does not exist and cannot be created under %s: %v", dir, existing, oneLine(err))}
	}
	free, err := d.freeBytes(existing)
	if err != nil {
		return finding{false, fmt.Sprintf("spool: cannot read the free space of %s: %v", existing, oneLine(err))}
	}
	// The spool needs its quota plus each camera's open and newest
	// finished segment; a derived quota is sized to fit (recorder.PlanCapacity).
	plan := recorder.PlanCapacity(cfg.Recording, runtime.GOMAXPROCS(0), int64(min(free, math.MaxInt64)))
	want, quota := uint64(plan.DiskBytes), uint64(plan.QuotaBytes)
	if plan.Cameras == 0 {
		return finding{false, fmt.Sprintf("spool: only %s free for %s, not the outage budget of one camera (recording.spool_max_bytes (%s) plus 2 segments): free space or lower recording.outage_budget", humanBytes(free), dir, humanBytes(quota))}
	}
	if free < want {
		return finding{false, fmt.Sprintf("spool: only %s free for %s, less than the %s the spool needs for %d cameras (recording.spool_max_bytes (%s) plus 2 segments a camera): free space, lower the quota or set recording.max_cameras", humanBytes(free), dir, humanBytes(want), plan.Cameras, humanBytes(quota))}
	}
	return finding{true, fmt.Sprintf("spool: %s free for %s (recording.spool_max_bytes %s; %d cameras, bound: %s)", humanBytes(free), dir, humanBytes(quota), plan.Cameras, plan.Bound)}
}

// writableDir reports whether files can be created in dir.
func writableDir(dir string) error {
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return err
	}
	_ = f.Close()
	return os.Remove(f.Name())
}

// humanBytes prints n in binary units.
func humanBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// oneLine keeps the first line of an error's text.
func oneLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// redactNATS removes user information from a comma-separated URL list.
func redactNATS(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			u.User = nil
			parts[i] = u.String()
		}
	}
	return strings.Join(parts, ",")
}
