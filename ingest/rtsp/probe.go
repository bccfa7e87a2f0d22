package rtsp

import (
	"context"
	"errors"

	"github.com/bluenviron/gortsplib/v4/pkg/base"

	"github.com/vigia/vigia/ingest"
)

var _ ingest.Prober = (*Source)(nil)

// Probe implements ingest.Prober: a TCP connection to the camera's RTSP
// port, through the address guard, closed at once.
func (s *Source) Probe(ctx context.Context) error {
	u, err := base.ParseURL(s.cam.URL)
	if err != nil {
		return errors.New("url does not parse")
	}
	return ingest.ProbeTCP(ctx, s.dialer(), canonicalAddr(u))
}
