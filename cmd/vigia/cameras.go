package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/status"
)

// cameraRow is one line of `vigia cameras`.
type cameraRow struct {
	ID             string `json:"id"`
	Code           int    `json:"code"`
	Status         string `json:"status"`
	Reason         string `json:"reason,omitempty"`
	ReasonDetail   string `json:"reason_detail,omitempty"`
	Node           string `json:"node,omitempty"`
	Lease          string `json:"lease,omitempty"`
	Width          int    `json:"width,omitempty"`
	Height         int    `json:"height,omitempty"`
	Since          string `json:"since,omitempty"`
	RecordingError bool   `json:"recording_error"`
	ResolutionErr  bool   `json:"resolution_error"`
	Blocked        bool   `json:"blocked,omitempty"`
	LastError      string `json:"last_error,omitempty"`
}

// runCameras implements `vigia cameras`: every camera of the registry
// (NATS KV cameras) with its last status (camera_status) and the node
// holding its lease (assign).
func runCameras(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("cameras", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	cfgArgs, ownArgs := splitOwnFlags(args, "json")
	if err := fs.Parse(ownArgs); err != nil {
		return err
	}
	cfg, err := config.Load(cfgArgs, os.Environ())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{URL: natsURL(cfg), Token: cfg.NATS.Token, Name: "vigia-cameras",
		ConnectTimeout: 5 * time.Second}, zap.NewNop())
	if err != nil {
		return fmt.Errorf("nats %s: %w", natsURL(cfg), err)
	}
	defer b.Close()
	rows, err := listCameras(ctx, b)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if rows == nil {
			rows = []cameraRow{}
		}
		return enc.Encode(rows)
	}
	writeCameraTable(stdout, rows)
	return nil
}

// natsURL is nats.url, or the embedded server's address (nats.listen) of
// a node running on this machine when nats.url is empty.
func natsURL(cfg *config.Config) string {
	if cfg.NATS.URL != "" {
		return cfg.NATS.URL
	}
	return "nats://" + cfg.NATS.Listen
}

// splitOwnFlags separates the command's own boolean flags (names) from the
// configuration flags passed to config.Load.
func splitOwnFlags(args []string, names ...string) (cfgArgs, own []string) {
	for _, a := range args {
		matched := false
		for _, n := range names {
			if a == "-"+n || a == "--"+n || strings.HasPrefix(a, "-"+n+"=") || strings.HasPrefix(a, "--"+n+"=") {
				matched = true
			}
		}
		if matched {
			own = append(own, a)
		} else {
			cfgArgs = append(cfgArgs, a)
		}
	}
	return cfgArgs, own
}

// listCameras reads the registry, the statuses and the leases.
func listCameras(ctx context.Context, b *bus.Bus) ([]cameraRow, error) {
	cams, err := b.ListCameras(ctx)
	if err != nil && len(cams) == 0 {
		return nil, err
	}
	rows := make([]cameraRow, 0, len(cams))
	for _, c := range cams {
		rows = append(rows, cameraRowOf(ctx, b, c))
	}
	sort.Slice(rows, func(i, j int) bool { return idLess(rows[i].ID, rows[j].ID) })
	return rows, nil
}

func cameraRowOf(ctx context.Context, b *bus.Bus, c camera.Config) cameraRow {
	r := cameraRow{ID: c.ID, Status: "-", Blocked: c.Blocked}
	if s, ok, err := b.GetStatus(ctx, c.ID); err == nil && ok {
		r.Code, r.Status, r.Node = int(s.Code), s.Text, s.Node
		if r.Status == "" {
			r.Status = s.Code.Text()
		}
		r.Width, r.Height = s.Width, s.Height
		r.RecordingError, r.ResolutionErr, r.LastError = s.RecordingError, s.ResolutionError, s.LastError
		if s.Code != status.Online {
			r.Reason, r.ReasonDetail = string(s.Reason), s.ReasonDetail
		}
		if !s.Since.IsZero() {
			r.Since = s.Since.UTC().Format(time.RFC3339)
		}
	} else if err != nil {
		r.LastError = err.Error()
	}
	r.Lease = app.LeaseHolder(ctx, b, c.ID)
	return r
}

// idLess orders numeric ids by value, then other ids as text.
func idLess(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	switch {
	case errA == nil && errB == nil:
		return x < y
	case errA == nil:
		return true
	case errB == nil:
		return false
	}
	if len(a) != len(b) && strings.TrimRight(a, "0123456789") == strings.TrimRight(b, "0123456789") {
		return len(a) < len(b) // cam-2 before cam-10
	}
	return a < b
}

// writeCameraTable prints rows as aligned columns and a summary by status.
func writeCameraTable(w io.Writer, rows []cameraRow) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CAMERA\tSTATUS\tREASON\tNODE\tSIZE\tSINCE\tERRORS")
	count := map[string]int{}
	for _, r := range rows {
		node := r.Lease
		if node == "" {
			node = "-"
		}
		size := "-"
		if r.Width > 0 {
			size = fmt.Sprintf("%dx%d", r.Width, r.Height)
		}
		since := r.Since
		if since == "" {
			since = "-"
		}
		reason := "-"
		if r.Reason != "" {
			reason = r.Reason
			if r.ReasonDetail != "" {
				reason += " (" + r.ReasonDetail + ")"
			}
		}
		var errs []string
		if r.Blocked {
			errs = append(errs, "blocked")
		}
		if r.RecordingError {
			errs = append(errs, "recording_error")
		}
		if r.ResolutionErr {
			errs = append(errs, "resolution_error")
		}
		if r.LastError != "" && r.Code != int(status.Online) {
			errs = append(errs, strconv.Quote(r.LastError))
		}
		e := strings.Join(errs, " ")
		if e == "" {
			e = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, reason, node, size, since, e)
		count[r.Status]++
	}
	_ = tw.Flush()
	var parts []string
	for s, n := range count {
		parts = append(parts, fmt.Sprintf("%d %s", n, s))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		fmt.Fprintf(w, "%d cameras\n", len(rows))
		return
	}
	fmt.Fprintf(w, "%d cameras: %s\n", len(rows), strings.Join(parts, ", "))
}
