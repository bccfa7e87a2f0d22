package rtmp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/rtmp/wire"
)

var _ ingest.Source = (*Source)(nil)

// Source pulls one rtmp:// or rtmps:// stream.
type Source struct {
	cam ingest.Camera
	cfg ingest.SourceConfig
	log *zap.Logger

	// Limits cap what the server can make the connection allocate.
	Limits wire.Limits

	// OnDecodeError is called for media that is dropped without ending the
	// connection. Optional.
	OnDecodeError func(err error)
}

// New returns a pull source for cam.
func New(cam ingest.Camera, cfg ingest.SourceConfig, log *zap.Logger) *Source {
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 10 * time.Second
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Source{cam: cam, cfg: cfg, log: log}
}

// Driver returns an ingest.Driver for rtmp:// and rtmps:// URLs.
func Driver(log *zap.Logger, onDecodeError func(error)) ingest.Driver {
	return func(cam ingest.Camera, cfg ingest.SourceConfig) (ingest.Source, error) {
		s := New(cam, cfg, log.With(zap.String("camera", cam.ID)))
		s.OnDecodeError = onDecodeError
		return s, nil
	}
}

// Run implements ingest.Source.
func (s *Source) Run(ctx context.Context, sink ingest.Sink) error {
	t, err := parseTarget(s.cam.URL)
	if err != nil {
		return err
	}
	dial := ingest.GuardedDialer(s.cfg.AllowPrivateNetworks || s.cam.Trusted)
	dctx, cancel := context.WithTimeout(ctx, s.cfg.ReadTimeout)
	nc, err := dial(dctx, "tcp", t.host)
	cancel()
	if err != nil {
		return fmt.Errorf("dial %s: %w", t.host, err)
	}
	if t.tls {
		nc = tls.Client(nc, &tls.Config{ServerName: t.name, MinVersion: tls.VersionTLS12})
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	err = s.session(nc, t, sink)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

func (s *Source) deadline(nc net.Conn) {
	_ = nc.SetDeadline(time.Now().Add(s.cfg.ReadTimeout))
}

func (s *Source) session(nc net.Conn, t *target, sink ingest.Sink) error {
	s.deadline(nc)
	if err := wire.ClientHandshake(nc); err != nil {
		return err
	}
	c := wire.NewConn(nc, s.Limits)
	if err := c.Start(false); err != nil {
		return err
	}
	connect := wire.Object{
		{Name: "app", Value: t.app},
		{Name: "flashVer", Value: "LNX 9,0,124,2"},
		{Name: "tcUrl", Value: t.tcURL},
		{Name: "fpad", Value: false},
		{Name: "capabilities", Value: 15.0},
		{Name: "audioCodecs", Value: 4071.0},
		{Name: "videoCodecs", Value: 252.0},
		{Name: "videoFunction", Value: 1.0},
		{Name: "fourCcList", Value: []any{"hvc1", "avc1"}},
	}
	if err := c.WriteCommand(0, "connect", 1, connect); err != nil {
		return err
	}
	if _, err := s.await(c, nc, 1); err != nil {
		return err
	}
	if err := c.WriteCommand(0, "createStream", 2, nil); err != nil {
		return err
	}
	res, err := s.await(c, nc, 2)
	if err != nil {
		return err
	}
	sid, ok := res.Arg(1).(float64)
	if !ok || sid < 0 || sid > 1<<24 {
		return fmt.Errorf("%w: createStream answered no stream id", wire.ErrAMF)
	}
	streamID := uint32(sid)
	if err := c.WriteCommand(streamID, "play", 0, nil, t.stream, -2000.0); err != nil {
		return err
	}
	if err := c.WriteUserControl(wire.EventSetBuffer, streamID, 3000); err != nil {
		return err
	}
	d := newDemuxer(sink, s.cam.Sound)
	d.onDecodeError = s.OnDecodeError
	for {
		s.deadline(nc)
		m, err := c.ReadMessage()
		if err != nil {
			return err
		}
		switch m.Type {
		case wire.TypeCommandAMF0, wire.TypeCommandAMF3:
			cmd, err := wire.ParseCommand(m)
			if err != nil {
				return err
			}
			if err := playStatus(cmd); err != nil {
				return err
			}
		default:
			if err := d.message(m); err != nil {
				return err
			}
		}
	}
}

// await reads until the _result or _error of transaction tid.
func (s *Source) await(c *wire.Conn, nc net.Conn, tid float64) (*wire.Command, error) {
	for {
		s.deadline(nc)
		m, err := c.ReadMessage()
		if err != nil {
			return nil, err
		}
		if m.Type != wire.TypeCommandAMF0 && m.Type != wire.TypeCommandAMF3 {
			continue
		}
		cmd, err := wire.ParseCommand(m)
		if err != nil {
			return nil, err
		}
		switch {
		case cmd.Name == "_result" && cmd.TransactionID == tid:
			return cmd, nil
		case cmd.Name == "_error" && cmd.TransactionID == tid:
			return nil, refusal(cmd.StatusObject())
		case cmd.Name == "onStatus":
			if err := playStatus(cmd); err != nil {
				return nil, err
			}
		}
	}
}

// refusal classifies a refused connect or createStream.
func refusal(info wire.Object) error {
	code, desc := info.String("code"), info.String("description")
	err := fmt.Errorf("server refused: %s %s", code, desc)
	low := strings.ToLower(code + " " + desc)
	switch {
	case strings.Contains(low, "rejected") || strings.Contains(low, "auth") || strings.Contains(low, "unauthorized"):
		return ingest.Permanent(ingest.ReasonAuth, err)
	case strings.Contains(low, "invalidapp") || strings.Contains(low, "notfound"):
		return ingest.Permanent(ingest.ReasonNotFound, err)
	}
	return err
}

// playStatus classifies the onStatus messages of a play.
func playStatus(cmd *wire.Command) error {
	if cmd.Name != "onStatus" {
		return nil
	}
	info := cmd.StatusObject()
	code := info.String("code")
	switch code {
	case "NetStream.Play.StreamNotFound":
		return ingest.Permanent(ingest.ReasonNotFound, errors.New(code))
	case "NetStream.Play.Stop", "NetStream.Play.UnpublishNotify", "NetStream.Play.Complete":
		return fmt.Errorf("%w: %s", ErrStreamEnded, code)
	}
	if info.String("level") == "error" {
		return refusal(info)
	}
	return nil
}
