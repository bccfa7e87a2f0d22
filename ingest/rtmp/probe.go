package rtmp

import (
	"context"

	"github.com/vigia/vigia/ingest"
)

var _ ingest.Prober = (*Source)(nil)

// Probe implements ingest.Prober: a TCP connection to the server's RTMP
// port, through the address guard, closed at once.
func (s *Source) Probe(ctx context.Context) error {
	t, err := parseTarget(s.cam.URL)
	if err != nil {
		return err
	}
	return ingest.ProbeTCP(ctx, ingest.GuardedDialer(s.cfg.AllowPrivateNetworks || s.cam.Trusted), t.host)
}
