package p2p

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
)

// ConfiguredDriver returns the Driver of the resolver that spec (the
// p2p.resolver setting) names (NewResolver). Without a resolver, or with
// one that does not build, every P2P camera fails with ERRO PERMANENTE
// naming why; a resolver that does not build is also logged, once.
func ConfiguredDriver(spec, defaultUser string, timeout time.Duration, next ingest.Registry, log *zap.Logger) ingest.Driver {
	r, err := NewResolver(spec, defaultUser, timeout)
	if err != nil {
		if !errors.Is(err, ErrNoResolver) {
			log.Error("p2p cameras cannot be recorded", zap.Error(err))
		}
		r = failing{err: err}
	}
	return Driver(r, next, log)
}

// failing fails every P2P camera with a configuration error.
type failing struct{ err error }

func (f failing) Resolve(context.Context, string, Target) (string, error) {
	return "", ingest.Permanent(ingest.ReasonBadURL, f.err)
}
