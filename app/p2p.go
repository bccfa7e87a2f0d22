package app

import (
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/p2p"
)

// p2pDriver builds the P2P driver of p2p.resolver (p2p.ConfiguredDriver);
// resolved URLs are run by the drivers of next.
func (a *App) p2pDriver(next ingest.Registry) ingest.Driver {
	c := a.cfg.P2P
	return p2p.ConfiguredDriver(c.Resolver, c.User, time.Duration(c.LookupTimeout), next, a.log.With(zap.String("component", "p2p")))
}
