package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/export"
	"github.com/vigia/vigia/live/transcode"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
)

const exportUsage = "usage: vigia export --config FILE --camera ID --from FROM --to TO --out FILE.mp4 [--codec h264] (FROM and TO: Unix milliseconds or RFC 3339; FILE.manifest.json and FILE.manifest.sig are written beside it; --codec h264 transcodes H.265 recordings to H.264)"

// runExport implements `vigia export`: one downloadable video made from
// storage directly, without NATS or a running node, with its manifest
// signed by the deployment key (docs/export.md) beside it.
func runExport(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	codec, args, err := takeFlag(args, "codec", exportUsage)
	if err != nil {
		return err
	}
	var h264 func([]byte) ([]byte, error)
	switch codec {
	case "":
	case export.CodecH264:
		if h264 = transcode.Rendition(); h264 == nil {
			return errors.New("--codec h264: this build cannot transcode (built without cgo)")
		}
	default:
		return fmt.Errorf("--codec %q: want %q; %s", codec, export.CodecH264, exportUsage)
	}
	rc, err := openRange(ctx, args, []string{"camera", "from", "to", "out"}, exportUsage)
	if err != nil {
		return err
	}
	own, from, to, cfg, store := rc.own, rc.from, rc.to, rc.cfg, rc.store
	signKey, _, err := app.ManifestKeys(cfg)
	if err != nil {
		return fmt.Errorf("the manifest is signed with the key of security.secret: %w", err)
	}
	bar := newProgressBar(stderr)
	started := time.Now()
	req := export.Request{Camera: own["camera"], Start: from, End: to}
	cat := catalogue.New(catalogue.Config{Store: store,
		MaxSegment: storage.MaxSegmentDuration(time.Duration(cfg.Recording.SegmentDuration))})
	clip, err := export.Build(ctx, store, req, export.Options{
		H264:      h264,
		MaxRange:  time.Duration(cfg.Export.MaxRange),
		Progress:  bar.update,
		Catalogue: cat,
	})
	bar.done()
	if err != nil {
		return err
	}
	defer clip.Close()
	f, err := os.Create(own["out"])
	if err != nil {
		return err
	}
	if _, err := clip.WriteTo(f); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	took := time.Since(started)
	mfile, sfile, err := writeManifest(ctx, store, cat, own["out"], req, clip, signKey)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s from %s, %d segments, %d gaps, %.1f MB, made in %s (%.0fx real time)\n",
		own["out"], clip.Duration().Round(time.Millisecond), clip.Start.UTC().Format(time.RFC3339Nano), clip.Segments,
		len(clip.Gaps), float64(clip.Size())/1e6, took.Round(time.Millisecond), clip.Duration().Seconds()/max(took.Seconds(), 1e-9))
	fmt.Fprintf(stdout, "%s, %s: its manifest and signature (vigia verify %s %s --key export.pub)\n", mfile, sfile, own["out"], mfile)
	return nil
}

// writeManifest writes the signed manifest of clip, written to out, beside
// it: out without its extension plus .manifest.json, and .manifest.sig
// (the raw Ed25519 signature), the signature first, as the API stores them.
func writeManifest(ctx context.Context, store storage.Store, cat *catalogue.Catalogue, out string, req export.Request, clip *export.Clip, key ed25519.PrivateKey) (string, string, error) {
	m, err := export.NewManifest(ctx, store, cat, filepath.Base(out), req, clip, time.Now())
	if err != nil {
		return "", "", fmt.Errorf("manifest: %w", err)
	}
	body, sig := m.Sign(key, sign.KeyID(key.Public().(ed25519.PublicKey)))
	base := strings.TrimSuffix(out, filepath.Ext(out))
	mfile, sfile := base+".manifest.json", base+".manifest.sig"
	if err := os.WriteFile(sfile, sig, 0o644); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(mfile, body, 0o644); err != nil {
		return "", "", err
	}
	return mfile, sfile, nil
}

// takeFlag takes the optional flag name (--name VALUE or --name=VALUE)
// out of args: its value ("" when absent) and the other arguments.
func takeFlag(args []string, name, usage string) (string, []string, error) {
	var val string
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		n, v, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if n != name || !strings.HasPrefix(args[i], "-") {
			rest = append(rest, args[i])
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return "", nil, fmt.Errorf("--%s needs a value; %s", name, usage)
			}
			i++
			v = args[i]
		}
		val = v
	}
	return val, rest, nil
}

// rangeCommand is what the subcommands that read one camera's range from
// storage take: their own flags, the range, the configuration and its
// store.
type rangeCommand struct {
	own      map[string]string
	from, to time.Time
	cfg      *config.Config
	store    storage.Store
}

// openRange reads the flags names (each required, --name VALUE or
// --name=VALUE) out of args, "from" and "to" as times, the rest as the
// configuration's flags, and opens the configured store.
func openRange(ctx context.Context, args, names []string, usage string) (rangeCommand, error) {
	var rc rangeCommand
	rc.own = map[string]string{}
	rest := args
	for _, n := range names {
		v, r, err := takeFlag(rest, n, usage)
		if err != nil {
			return rc, err
		}
		rc.own[n], rest = v, r
	}
	for _, k := range names {
		if rc.own[k] == "" {
			return rc, fmt.Errorf("--%s is required; %s", k, usage)
		}
	}
	var err error
	if rc.from, err = parseExportTime(rc.own["from"]); err != nil {
		return rc, fmt.Errorf("--from: %w", err)
	}
	if rc.to, err = parseExportTime(rc.own["to"]); err != nil {
		return rc, fmt.Errorf("--to: %w", err)
	}
	if rc.cfg, err = config.Load(rest, os.Environ()); err != nil {
		return rc, err
	}
	rc.store, err = app.OpenStore(ctx, rc.cfg, zap.NewNop())
	return rc, err
}

// parseExportTime accepts Unix milliseconds or RFC 3339.
func parseExportTime(s string) (time.Time, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errors.New("want Unix milliseconds or RFC 3339, e.g. 2026-03-10T12:00:00Z")
	}
	return t, nil
}

// progressBar draws on a terminal and stays silent otherwise.
type progressBar struct {
	w    io.Writer
	tty  bool
	last int
}

func newProgressBar(w io.Writer) *progressBar {
	b := &progressBar{w: w, last: -1}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			b.tty = true
		}
	}
	return b
}

func (b *progressBar) update(done, total int64) {
	if !b.tty || total <= 0 {
		return
	}
	pct := int(100 * done / total)
	if pct == b.last {
		return
	}
	b.last = pct
	const width = 40
	n := width * pct / 100
	fmt.Fprintf(b.w, "\r[%s%s] %3d%% %.1f/%.1f MB", strings.Repeat("#", n), strings.Repeat(" ", width-n), pct, float64(done)/1e6, float64(total)/1e6)
}

func (b *progressBar) done() {
	if b.tty && b.last >= 0 {
		fmt.Fprintln(b.w)
	}
}
