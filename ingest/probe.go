package ingest

import (
	"context"
	"net"
)

// Prober is implemented by sources that can tell cheaply whether their
// camera answers, without a session: the supervisor probes a camera that
// is down and connects again as soon as it answers.
type Prober interface {
	// Probe returns nil when the camera accepts a connection now.
	Probe(ctx context.Context) error
}

// ProbeTCP opens a TCP connection to address with dial and closes it at
// once: the liveness probe of sources whose camera listens on TCP.
func ProbeTCP(ctx context.Context, dial func(ctx context.Context, network, address string) (net.Conn, error), address string) error {
	c, err := dial(ctx, "tcp", address)
	if err != nil {
		return err
	}
	return c.Close()
}
