package bench

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// natsReadyTimeout bounds how long the NATS process may take to accept
// connections.
const natsReadyTimeout = 60 * time.Second

// natsProc is a NATS server with JetStream run as its own process
// (`vigia nats`), as the recorder nodes of a cluster use one.
type natsProc struct {
	*child
	url string
}

// startNATS runs the NATS command of o on a free port of 127.0.0.1 with its
// JetStream store in dir, and waits until it accepts connections.
func startNATS(ctx context.Context, o Options, dir string) (*natsProc, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd, err := o.NATSCommand(addr, dir)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	c, err := startChild("nats", cmd)
	if err != nil {
		return nil, err
	}
	n := &natsProc{child: c, url: "nats://" + addr}
	if err := n.waitReady(ctx, addr); err != nil {
		n.stop(5 * time.Second)
		return nil, err
	}
	return n, nil
}

// waitReady waits until the process has printed that it runs (the buckets
// and streams exist by then) and its port accepts connections.
func (n *natsProc) waitReady(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, natsReadyTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if strings.Contains(n.out.String(), "vigia nats running") {
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				_ = c.Close()
				return nil
			}
		}
		select {
		case <-n.done:
			return n.exitError()
		case <-ctx.Done():
			return fmt.Errorf("nats at %s not ready: %w; output:\n%s", addr, ctx.Err(), n.out.String())
		case <-tick.C:
		}
	}
}
