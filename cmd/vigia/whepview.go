package main

import (
	"bufio"
	"context"
	"flag"
	"io"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/vigia/vigia/bench"
)

// runWHEPViewers implements `vigia whep-viewers`: the WebRTC viewers of
// `vigia bench --webrtc-viewers`, one per WHEP address read from standard
// input (one a line), watching for --window, their sockets taking runs whole with --gro
// (bench.RunWHEPViewers).
func runWHEPViewers(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("whep-viewers", flag.ContinueOnError)
	window := fs.Duration("window", 20*time.Second, "how long the viewers watch once connected")
	gro := fs.Bool("gro", true, "the viewers' sockets take runs of datagrams sent in one UDP_SEGMENT send whole (UDP_GRO, Linux)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var urls []string
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if u := strings.TrimSpace(sc.Text()); u != "" {
			urls = append(urls, u)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return bench.RunWHEPViewers(ctx, urls, *window, *gro, stdout)
}
