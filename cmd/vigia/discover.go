package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigia/vigia/camevents"
	"github.com/vigia/vigia/config"
)

// discoverRow is one line of `vigia cameras discover`.
type discoverRow struct {
	Address  string   `json:"address"`
	From     string   `json:"from"`
	Model    string   `json:"model,omitempty"`
	Name     string   `json:"name,omitempty"`
	Endpoint string   `json:"endpoint,omitempty"`
	XAddrs   []string `json:"xaddrs"`
}

// runDiscover implements `vigia cameras discover`: a WS-Discovery probe
// from this machine, to the multicast group or unicast to --range, within
// the dial guard of the configuration (ingest.allow_private_networks).
func runDiscover(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("cameras discover", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	ranges := fs.String("range", "", "comma-separated addresses and prefixes probed unicast (192.168.1.0/24); empty probes the multicast group")
	port := fs.Int("port", 3702, "UDP port probed unicast")
	wait := fs.Duration("wait", camevents.DefaultProbeWait, "how long answers are awaited")
	cfgArgs, ownArgs := splitValueFlags(args, []string{"json"}, []string{"range", "port", "wait"})
	if err := fs.Parse(ownArgs); err != nil {
		return err
	}
	cfg, err := config.Load(cfgArgs, os.Environ())
	if err != nil {
		return err
	}
	o := camevents.DiscoverOptions{Port: *port, Wait: *wait, AllowPrivate: cfg.Ingest.AllowPrivateNetworks}
	if *ranges != "" {
		o.Ranges = strings.Split(*ranges, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	found, err := camevents.Discover(ctx, o)
	if err != nil {
		return err
	}
	rows := make([]discoverRow, 0, len(found))
	for _, m := range found {
		rows = append(rows, discoverRow{Address: m.Host(), From: m.From.String(), Model: m.Scope("hardware"), Name: m.Scope("name"),
			Endpoint: m.Endpoint, XAddrs: m.XAddrs})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ADDRESS\tMODEL\tNAME\tXADDRS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Address, dash(r.Model), dash(r.Name), strings.Join(r.XAddrs, " "))
	}
	_ = tw.Flush()
	fmt.Fprintf(stdout, "%d cameras answered within %v\n", len(rows), o.Wait.Round(time.Millisecond))
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// splitValueFlags separates the command's own flags from configuration
// flags, as splitOwnFlags does, taking the next argument as the value of a
// flag of valued given without "=".
func splitValueFlags(args, bools, valued []string) (cfgArgs, own []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name := strings.TrimLeft(a, "-")
		name, _, hasValue := strings.Cut(name, "=")
		switch {
		case !strings.HasPrefix(a, "-"):
			cfgArgs = append(cfgArgs, a)
		case slices.Contains(bools, name):
			own = append(own, a)
		case slices.Contains(valued, name):
			own = append(own, a)
			if !hasValue && i+1 < len(args) {
				i++
				own = append(own, args[i])
			}
		default:
			cfgArgs = append(cfgArgs, a)
		}
	}
	return cfgArgs, own
}
