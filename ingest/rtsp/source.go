// Package rtsp is the RTSP camera source: a gortsplib client that turns RTP
// into access units with unwrapped timestamps.
package rtsp

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
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

	// allowed, when set, replaces the address policy of the dial guard
	// (tests use it to let one loopback address through).
	allowed func(netip.Addr) bool
}

// dialer returns the address guard of the camera's connections.
func (s *Source) dialer() dialFunc {
	if s.allowed != nil {
		return ingest.GuardedDialerFunc(s.allowed)
	}
	return ingest.GuardedDialer(s.cfg.AllowPrivateNetworks || s.cam.Trusted)
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
		DialContext:  withReadBuffer(newRedirectGuard(u, s.dialer()).DialContext),
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

	mu        sync.Mutex
	panicked  error
	lastUnit  atomic.Int64
	errsSince atomic.Int64 // decode errors since the last unit

	clockMu sync.Mutex
	clock   ingest.Clock // media time → local clock (jumps, rate)
}

func (r *reader) idleFor() time.Duration {
	return time.Since(time.Unix(0, r.lastUnit.Load()))
}

func (r *reader) panicErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.panicked
}

// videoTime maps a video frame's media time through the session's clock:
// anchored to the local clock at the first frame, so a camera's wrong clock
// never misplaces recordings, with its jumps absorbed and its rate
// corrected (ingest.Clock). It returns the output time and its wall time.
func (r *reader) videoTime(pts time.Duration) (time.Duration, time.Time) {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	o := r.clock.Video(pts, time.Now())
	return o, r.clock.Wall(o)
}

// otherTime maps the media time of another track with the video's mapping.
// Before the first video frame it reports ok false.
func (r *reader) otherTime(pts time.Duration) (time.Duration, time.Time, bool) {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	if !r.clock.Started() {
		return 0, time.Time{}, false
	}
	o := r.clock.Map(pts)
	return o, r.clock.Wall(o), true
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
	r.errsSince.Add(1)
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

// durationToTicks converts d to ticks of rate per second, rounding down.
func durationToTicks(d time.Duration, rate int) int64 {
	sec := int64(d / time.Second)
	rem := int64(d % time.Second)
	return sec*int64(rate) + rem*int64(rate)/int64(time.Second)
}

func ticksToDuration(t int64, rate int) time.Duration {
	sec := t / int64(rate)
	rem := t % int64(rate)
	return time.Duration(sec)*time.Second + time.Duration(rem)*time.Second/time.Duration(rate)
}

// floodErrors is the number of decode errors between two units past which
// the second one does not count as the camera being alive: a camera that
// sends mostly garbage, with a valid-looking unit now and then, is
// disconnected by the read timeout like one that sends nothing.
const floodErrors = 50

func (r *reader) deliver(u *media.Unit) {
	if r.errsSince.Swap(0) < floodErrors {
		r.lastUnit.Store(time.Now().UnixNano())
	}
	r.sink.Unit(u)
}
