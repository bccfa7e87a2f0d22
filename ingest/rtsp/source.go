// Package rtsp is the RTSP camera source: a gortsplib client that turns RTP
// into access units with unwrapped timestamps.
package rtsp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/bluenviron/gortsplib/v4/pkg/liberrors"
	"go.uber.org/zap"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/media"
)

var _ ingest.Source = (*Source)(nil)

// Source reads one RTSP camera.
type Source struct {
	cam ingest.Camera
	cfg ingest.SourceConfig
	log *zap.Logger

	// OnDecodeError is called for RTP that cannot be decoded. Optional.
	OnDecodeError func(err error)
}

// New returns an RTSP source for cam.
func New(cam ingest.Camera, cfg ingest.SourceConfig, log *zap.Logger) *Source {
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 10 * time.Second
	}
	if log == nil {
		log = zap.NewNop()
	}
	return &Source{cam: cam, cfg: cfg, log: log}
}

// Driver returns an ingest.Driver for rtsp:// and rtsps:// URLs.
func Driver(log *zap.Logger, onDecodeError func(error)) ingest.Driver {
	return func(cam ingest.Camera, cfg ingest.SourceConfig) (ingest.Source, error) {
		s := New(cam, cfg, log.With(zap.String("camera", cam.ID)))
		s.OnDecodeError = onDecodeError
		return s, nil
	}
}

func (s *Source) transport() (*gortsplib.Transport, error) {
	tr := s.cam.Transport
	if tr == "" {
		tr = s.cfg.DefaultTransport
	}
	switch tr {
	case "", "tcp":
		v := gortsplib.TransportTCP
		return &v, nil
	case "udp":
		v := gortsplib.TransportUDP
		return &v, nil
	case "auto":
		return nil, nil
	}
	return nil, ingest.Permanent(ingest.ReasonBadURL, fmt.Errorf("unknown transport %q", tr))
}

// Run implements ingest.Source.
func (s *Source) Run(ctx context.Context, sink ingest.Sink) error {
	u, err := base.ParseURL(s.cam.URL)
	if err != nil {
		return ingest.Permanent(ingest.ReasonBadURL, errors.New("url does not parse"))
	}
	if u.Scheme != "rtsp" && u.Scheme != "rtsps" {
		return ingest.Permanent(ingest.ReasonBadURL, ingest.ErrUnsupportedScheme)
	}
	tr, err := s.transport()
	if err != nil {
		return err
	}
	c := &gortsplib.Client{
		Scheme:       u.Scheme,
		Host:         u.Host,
		ReadTimeout:  s.cfg.ReadTimeout,
		WriteTimeout: s.cfg.ReadTimeout,
		Transport:    tr,
		DialContext:  ingest.GuardedDialer(s.cfg.AllowPrivateNetworks || s.cam.Trusted),
		UserAgent:    "vigia",
	}
	if s.OnDecodeError != nil {
		c.OnDecodeError = s.OnDecodeError
	}
	if err := c.Start2(); err != nil {
		return classify(err)
	}
	defer c.Close()

	stop := context.AfterFunc(ctx, c.Close)
	defer stop()

	desc, _, err := c.Describe(u)
	if err != nil {
		return classify(err)
	}
	r, err := newReader(desc, s.cam.Sound)
	if err != nil {
		return err
	}
	r.sink = sink
	r.client = c
	r.onDecodeError = s.OnDecodeError
	if err := sink.Tracks(r.tracks); err != nil {
		return ingest.Permanent(ingest.ReasonUnsupported, err)
	}
	for _, m := range r.medias {
		if _, err := c.Setup(desc.BaseURL, m, 0, 0); err != nil {
			return classify(err)
		}
	}
	r.register()
	if _, err := c.Play(nil); err != nil {
		return classify(err)
	}

	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	t := time.NewTicker(s.cfg.ReadTimeout / 4)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if perr := r.panicErr(); perr != nil {
				return perr
			}
			return classify(err)
		case <-t.C:
			if r.idleFor() > s.cfg.ReadTimeout {
				c.Close()
				<-done
				return ingest.ErrReadTimeout
			}
		}
	}
}

// classify maps gortsplib errors to ingest errors.
func classify(err error) error {
	var bad liberrors.ErrClientBadStatusCode
	if errors.As(err, &bad) {
		switch bad.Code {
		case base.StatusUnauthorized, base.StatusForbidden:
			return ingest.Permanent(ingest.ReasonAuth, err)
		case base.StatusNotFound:
			return ingest.Permanent(ingest.ReasonNotFound, err)
		}
	}
	if _, ok := ingest.IsPermanent(err); ok {
		return err
	}
	return err
}

// reader turns one session's RTP into units.
type reader struct {
	medias  []*description.Media
	formats []format.Format
	tracks  []*media.Track

	sink          ingest.Sink
	client        *gortsplib.Client
	onDecodeError func(error)

	mu       sync.Mutex
	panicked error
	lastUnit atomic.Int64
	start    time.Time
	startSet sync.Once
}

func (r *reader) idleFor() time.Duration {
	return time.Since(time.Unix(0, r.lastUnit.Load()))
}

func (r *reader) panicErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.panicked
}

// wallTime anchors media times to the local clock at the first unit, so a
// camera's wrong clock never misplaces recordings.
func (r *reader) wallTime(pts time.Duration) time.Time {
	r.startSet.Do(func() { r.start = time.Now().Add(-pts) })
	return r.start.Add(pts)
}

// guard runs f, turning a panic into the end of the session.
func (r *reader) guard(f func()) {
	defer func() {
		if v := recover(); v != nil {
			r.mu.Lock()
			if r.panicked == nil {
				r.panicked = fmt.Errorf("panic while reading: %v", v)
			}
			r.mu.Unlock()
			go r.client.Close()
		}
	}()
	f()
}

func (r *reader) decodeError(err error) {
	if r.onDecodeError != nil {
		r.onDecodeError(err)
	}
}

func (r *reader) register() {
	r.lastUnit.Store(time.Now().UnixNano())
	for i, m := range r.medias {
		idx := i
		switch f := r.formats[i].(type) {
		case *format.H264:
			r.registerH264(m, f, idx)
		case *format.H265:
			r.registerH265(m, f, idx)
		case *format.MPEG4Audio:
			r.registerAAC(m, f, idx)
		}
	}
}

func ticksToDuration(t int64, rate int) time.Duration {
	sec := t / int64(rate)
	rem := t % int64(rate)
	return time.Duration(sec)*time.Second + time.Duration(rem)*time.Second/time.Duration(rate)
}

// copyAU copies an access unit into one buffer the sink can own.
func copyAU(au [][]byte) [][]byte {
	n := 0
	for _, nalu := range au {
		n += len(nalu)
	}
	buf := make([]byte, 0, n)
	out := make([][]byte, len(au))
	for i, nalu := range au {
		buf = append(buf, nalu...)
		out[i] = buf[len(buf)-len(nalu):]
	}
	return out
}

func (r *reader) deliver(u *media.Unit) {
	r.lastUnit.Store(time.Now().UnixNano())
	r.sink.Unit(u)
}
