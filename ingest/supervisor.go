package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/status"
)

// SupervisorConfig configures a Supervisor.
type SupervisorConfig struct {
	// Camera id, for logs.
	Camera string

	// NewSource builds the source for each attempt.
	NewSource func() (Source, error)

	// Sink receives the media.
	Sink Sink

	// OnStatus is called when the camera's status changes (never twice in a
	// row with the same code), with the error that caused it, if any.
	OnStatus func(code status.Code, err error)

	// OnPanic is called when the source panicked. Optional.
	OnPanic func(v any)

	// OnAttempt is called before each connection attempt. Optional.
	OnAttempt func()

	// OnRetry is called with the wait before each retry that follows a
	// failure that is not permanent. Optional.
	OnRetry func(wait time.Duration)

	// OnProbe is called after each liveness probe with whether the camera
	// answered. Optional.
	OnProbe func(ok bool)

	// Limiter caps connection attempts across all cameras. Optional.
	Limiter *rate.Limiter

	// Handshakes, optional, bounds the connection attempts in progress
	// across all cameras: an attempt takes a place before it connects and
	// gives it back at its first unit of media, when it fails, or after
	// HandshakeHold, whichever comes first. Its capacity is the bound.
	Handshakes chan struct{}

	// HandshakeHold is the longest an attempt keeps its place in
	// Handshakes, so that cameras that accept a connection and send
	// nothing do not hold the others back. It defaults to 3 seconds.
	HandshakeHold time.Duration

	// FastRetry is the wait between attempts, with jitter, during the
	// first FastFor of an outage (from the end of a run that delivered
	// media or lasted StableAfter, from the first failure of a camera
	// that never connected, or from the moment a probe finds a camera
	// answering again). It defaults to 1 second.
	FastRetry time.Duration

	// FastFor is how long the fast retries last. It defaults to 2
	// minutes; a negative value turns them off.
	FastFor time.Duration

	// ProbeInterval is the wait between liveness probes of a camera that
	// is down, with jitter, for sources that implement Prober. It
	// defaults to 1 second.
	ProbeInterval time.Duration

	// ProbeTimeout bounds one probe. It defaults to 1 second.
	ProbeTimeout time.Duration

	// BackoffMin, BackoffMax: after the fast retries, the delay between
	// attempts starts at BackoffMin and doubles up to BackoffMax, with
	// jitter. They default to 1 and 60 seconds.
	BackoffMin, BackoffMax time.Duration

	// StableAfter resets the backoff once a run lasted this long, media
	// or not. It defaults to 60 seconds. A run that delivered media resets
	// it too, however short: a camera that streamed and dropped is retried
	// at once, and only attempts that bring nothing make the wait grow.
	StableAfter time.Duration

	// PermanentRetry is the delay after a permanent failure. It defaults to
	// 5 minutes.
	PermanentRetry time.Duration

	// Log is the camera's logger.
	Log *zap.Logger
}

// Supervisor runs a camera's source until stopped: it reconnects (fast
// retries at first, then liveness probes and exponential backoff, with
// jitter; docs/recording.md, Reconnection), classifies failures into
// statuses and recovers panics so that one camera never takes another
// down.
type Supervisor struct {
	cfg       SupervisorConfig
	last      atomic.Int32
	wasOnline atomic.Bool
}

// NewSupervisor returns a Supervisor.
func NewSupervisor(cfg SupervisorConfig) *Supervisor {
	if cfg.BackoffMin <= 0 {
		cfg.BackoffMin = time.Second
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = 60 * time.Second
	}
	if cfg.StableAfter <= 0 {
		cfg.StableAfter = 60 * time.Second
	}
	if cfg.PermanentRetry <= 0 {
		cfg.PermanentRetry = 5 * time.Minute
	}
	if cfg.HandshakeHold <= 0 {
		cfg.HandshakeHold = 3 * time.Second
	}
	if cfg.FastRetry <= 0 {
		cfg.FastRetry = time.Second
	}
	if cfg.FastFor == 0 {
		cfg.FastFor = 2 * time.Minute
	}
	if cfg.ProbeInterval <= 0 {
		cfg.ProbeInterval = time.Second
	}
	if cfg.ProbeTimeout <= 0 {
		cfg.ProbeTimeout = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	return &Supervisor{cfg: cfg}
}

// Status returns the last status reported.
func (s *Supervisor) Status() status.Code { return status.Code(s.last.Load()) }

func (s *Supervisor) setStatus(c status.Code, err error) {
	if status.Code(s.last.Swap(int32(c))) == c {
		return
	}
	if s.cfg.OnStatus != nil {
		s.cfg.OnStatus(c, err)
	}
}

// Run blocks until ctx ends.
//
// After a failure that is not permanent, the next attempt comes after
// FastRetry while the outage is younger than FastFor. After that it comes
// after a backoff doubling from BackoffMin to BackoffMax, and a source
// that implements Prober is probed every ProbeInterval meanwhile: no
// attempt is made while its probes fail, the attempt comes with the first
// probe that succeeds once the wait is over, and at once when a probe
// succeeds after failing (the camera answers again), which starts the
// fast retries again.
func (s *Supervisor) Run(ctx context.Context) {
	backoff := s.cfg.BackoffMin
	var fastUntil time.Time // end of the fast retries of the current outage
	for {
		if s.cfg.Limiter != nil {
			if err := s.cfg.Limiter.Wait(ctx); err != nil {
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		if s.cfg.OnAttempt != nil {
			s.cfg.OnAttempt()
		}
		start := time.Now()
		delivered, src, err := s.runOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		if delivered || now.Sub(start) >= s.cfg.StableAfter {
			backoff = s.cfg.BackoffMin
			fastUntil = now.Add(s.cfg.FastFor) // an outage begins
		} else if fastUntil.IsZero() {
			fastUntil = now.Add(s.cfg.FastFor) // a camera that never connected
		}
		var wait time.Duration
		pe, permanent := IsPermanent(err)
		if permanent && pe.Reason == ReasonNotFound && s.wasOnline.Load() {
			// A stream that played before and is gone now is more likely a
			// gateway or NVR losing its camera than a wrong path: retry
			// with the normal backoff.
			permanent = false
		}
		if permanent {
			s.setStatus(status.Permanent, pe)
			s.cfg.Log.Warn("camera failed permanently, retrying slowly",
				zap.String("reason", pe.Reason), zap.Error(err), zap.Duration("retry_in", s.cfg.PermanentRetry))
			if !sleep(ctx, s.cfg.PermanentRetry) {
				return
			}
			continue
		}
		first := s.Status() != status.Offline
		s.setStatus(status.Offline, err)
		fast := now.Before(fastUntil)
		if fast {
			wait = jitter(s.cfg.FastRetry)
		} else {
			wait = backoff + time.Duration(rand.Int64N(int64(backoff)/2+1))
			backoff = min(backoff*2, s.cfg.BackoffMax)
		}
		// One line at info per outage; its retries (one a second at
		// first, for every camera that is down) at debug.
		logf := s.cfg.Log.Debug
		if first {
			logf = s.cfg.Log.Info
		}
		logf("camera disconnected, retrying", zap.Error(err), zap.Duration("retry_in", wait))
		if s.cfg.OnRetry != nil {
			s.cfg.OnRetry(wait)
		}
		p, ok := src.(Prober)
		if !ok || fast {
			if !sleep(ctx, wait) {
				return
			}
			continue
		}
		answered, ok := s.probeUntil(ctx, p, now.Add(wait))
		if !ok {
			return
		}
		if answered {
			fastUntil = time.Now().Add(s.cfg.FastFor)
		}
	}
}

// probeUntil probes p every ProbeInterval until a probe succeeds at or
// after due, or one succeeds after one failed (answered). It returns
// false when ctx ended.
func (s *Supervisor) probeUntil(ctx context.Context, p Prober, due time.Time) (answered, ok bool) {
	failed := false
	for {
		if !sleep(ctx, jitter(s.cfg.ProbeInterval)) {
			return false, false
		}
		pctx, cancel := context.WithTimeout(ctx, s.cfg.ProbeTimeout)
		err := p.Probe(pctx)
		cancel()
		if ctx.Err() != nil {
			return false, false
		}
		if s.cfg.OnProbe != nil {
			s.cfg.OnProbe(err == nil)
		}
		switch {
		case err != nil:
			failed = true
		case failed:
			s.cfg.Log.Info("camera answers again, reconnecting")
			return true, true
		case !time.Now().Before(due):
			return false, true
		}
	}
}

// jitter returns d plus or minus up to a fifth of it, so that cameras
// that went down together do not retry in step.
func jitter(d time.Duration) time.Duration {
	return d - d/5 + time.Duration(rand.Int64N(int64(d)*2/5+1))
}

// sleep waits d, returning false when ctx ends first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// runOnce runs one attempt, turning a panic into an error; delivered
// reports whether the attempt brought media, src is the source it ran
// (nil if none was built).
func (s *Supervisor) runOnce(ctx context.Context) (delivered bool, src Source, err error) {
	var release func() // gives back the place in Handshakes, if taken
	sink := &onlineSink{Sink: s.cfg.Sink, online: func() {
		release()
		s.wasOnline.Store(true)
		s.setStatus(status.Online, nil)
	}}
	defer func() {
		if v := recover(); v != nil {
			s.cfg.Log.Error("camera source panicked, restarting it",
				zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
			if s.cfg.OnPanic != nil {
				s.cfg.OnPanic(v)
			}
			err = fmt.Errorf("source panicked: %v", v)
		}
	}()
	src, err = s.cfg.NewSource()
	if err != nil {
		return false, nil, err
	}
	passive := false
	if p, ok := src.(Passive); ok && p.Passive() {
		passive = true
	}
	release = func() {}
	if s.cfg.Handshakes != nil && !passive {
		select {
		case s.cfg.Handshakes <- struct{}{}:
		case <-ctx.Done():
			return false, src, ctx.Err()
		}
		var once sync.Once
		give := func() { once.Do(func() { <-s.cfg.Handshakes }) }
		hold := time.AfterFunc(s.cfg.HandshakeHold, give)
		release = func() { hold.Stop(); give() }
	}
	defer release()
	// CONECTANDO is reported while a camera has not yet delivered media; a
	// camera that was online stays OFFLINE while it is retried, and so does
	// one that is to connect to us (a push) while nothing has come.
	if !s.wasOnline.Load() && s.Status() != status.Permanent {
		if passive {
			s.setStatus(status.Offline, ErrAwaitingCamera)
		} else {
			s.setStatus(status.Connecting, nil)
		}
	}
	err = src.Run(ctx, sink)
	if err == nil {
		err = errors.New("source ended")
	}
	return sink.seen.Load(), src, err
}

// onlineSink reports ONLINE at the first unit of a run.
type onlineSink struct {
	Sink
	online func()
	seen   atomic.Bool
}

func (o *onlineSink) Unit(u *media.Unit) {
	if !o.seen.Load() && o.seen.CompareAndSwap(false, true) {
		o.online()
	}
	o.Sink.Unit(u)
}
