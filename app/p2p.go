package app

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/p2p"
)

// badResolver fails every P2P camera with the configuration error.
type badResolver struct{ err error }

func (b badResolver) Resolve(context.Context, string, p2p.Target) (string, error) {
	return "", ingest.Permanent(ingest.ReasonBadURL, b.err)
}

// p2pDriver builds the P2P driver from p2p.resolver; resolved URLs are
// run by the drivers of next.
func (a *App) p2pDriver(next ingest.Registry) ingest.Driver {
	log := a.log.With(zap.String("component", "p2p"))
	r, err := p2p.NewResolver(a.cfg.P2P.Resolver, a.cfg.P2P.User, time.Duration(a.cfg.P2P.LookupTimeout))
	if err != nil {
		if !errors.Is(err, p2p.ErrNoResolver) {
			log.Error("p2p cameras cannot be recorded", zap.Error(err))
		}
		r = badResolver{err: err}
	}
	return p2p.Driver(r, next, log)
}
