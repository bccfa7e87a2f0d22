package rtmp

import (
	"context"
	"errors"

	"github.com/vigia/vigia/ingest"
)

var _ ingest.Source = (*PushSource)(nil)

// PushSource is a camera that publishes to this node's push Server. Run
// waits for the camera's publisher and returns when it goes away; the
// supervisor then reports OFFLINE and runs it again, and a publisher that
// arrives meanwhile is held (ServerConfig.Hold) until the next run takes
// it. Before its first publish a push camera is CONECTANDO: waiting for
// the camera to connect.
type PushSource struct {
	srv *Server
	cam ingest.Camera
}

// NewPushSource returns the push source of cam on srv.
func NewPushSource(srv *Server, cam ingest.Camera) *PushSource {
	return &PushSource{srv: srv, cam: cam}
}

// PushDriver returns an ingest.Driver for push cameras (URL scheme
// "rtmp-push").
func PushDriver(srv *Server) ingest.Driver {
	return func(cam ingest.Camera, _ ingest.SourceConfig) (ingest.Source, error) {
		return NewPushSource(srv, cam), nil
	}
}

// Passive implements ingest.Passive: the camera connects to the server.
func (p *PushSource) Passive() bool { return true }

// Run implements ingest.Source.
func (p *PushSource) Run(ctx context.Context, sink ingest.Sink) error {
	if err := p.srv.Listen(); err != nil {
		return err
	}
	sl := p.srv.register(ctx, p.cam.ID)
	for {
		var pub *publisher
		select {
		case pub = <-sl.handoff:
		case <-ctx.Done():
			return ctx.Err()
		case <-p.srv.done:
			return ErrServerClosed
		}
		d := newDemuxer(sink, p.cam.Sound)
		d.onDecodeError = p.srv.cfg.OnDecodeError
		pub.sinkc <- d
		select {
		case <-pub.done:
		case <-ctx.Done():
			pub.end(ctx.Err())
			<-pub.done
			return ctx.Err()
		}
		if errors.Is(pub.err, ErrReplaced) {
			continue
		}
		return pub.err
	}
}
