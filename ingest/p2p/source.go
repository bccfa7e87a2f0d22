package p2p

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
)

// Driver returns an ingest.Driver for p2p:// cameras: each run resolves
// the camera through r (nil when p2p.resolver is unset: the camera fails
// permanently) and runs the driver of the resolved URL's scheme from next.
// The resolved URL comes from the operator's gateway, so it may reach
// private addresses.
func Driver(r Resolver, next ingest.Registry, log *zap.Logger) ingest.Driver {
	return func(cam ingest.Camera, cfg ingest.SourceConfig) (ingest.Source, error) {
		return &Source{r: r, next: next, cam: cam, cfg: cfg, log: log.With(zap.String("camera", cam.ID))}, nil
	}
}

// Source is one run of a P2P camera.
type Source struct {
	r    Resolver
	next ingest.Registry
	cam  ingest.Camera
	cfg  ingest.SourceConfig
	log  *zap.Logger
}

// Run implements ingest.Source.
func (s *Source) Run(ctx context.Context, sink ingest.Sink) error {
	t, err := ParseURL(s.cam.URL)
	if err != nil {
		return err
	}
	if s.r == nil {
		return ingest.Permanent(ingest.ReasonBadURL, ErrNoResolver)
	}
	raw, err := s.r.Resolve(ctx, s.cam.ID, t)
	if err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ingest.Permanent(ingest.ReasonBadURL, errors.New("resolved url does not parse"))
	}
	drv := s.next[strings.ToLower(u.Scheme)]
	if drv == nil {
		return ingest.Permanent(ingest.ReasonBadURL, ingest.ErrUnsupportedScheme)
	}
	cam := s.cam
	cam.URL = raw
	cam.Trusted = true
	src, err := drv(cam, s.cfg)
	if err != nil {
		return err
	}
	return src.Run(ctx, sink)
}
