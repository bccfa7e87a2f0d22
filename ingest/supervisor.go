package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
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

	// Limiter caps connection attempts across all cameras. Optional.
	Limiter *rate.Limiter

	// BackoffMin, BackoffMax: the retry delay starts at BackoffMin and
	// doubles up to BackoffMax, with jitter. They default to 1 and 60
	// seconds.
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

// Supervisor runs a camera's source until stopped: it reconnects with
// exponential backoff and jitter, classifies failures into statuses and
// recovers panics so that one camera never takes another down.
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
func (s *Supervisor) Run(ctx context.Context) {
	backoff := s.cfg.BackoffMin
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
		delivered, err := s.runOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		if delivered || time.Since(start) >= s.cfg.StableAfter {
			backoff = s.cfg.BackoffMin
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
			wait = s.cfg.PermanentRetry
		} else {
			s.setStatus(status.Offline, err)
			wait = backoff + time.Duration(rand.Int64N(int64(backoff)/2+1))
			s.cfg.Log.Info("camera disconnected, retrying", zap.Error(err), zap.Duration("retry_in", wait))
			backoff *= 2
			if backoff > s.cfg.BackoffMax {
				backoff = s.cfg.BackoffMax
			}
			if s.cfg.OnRetry != nil {
				s.cfg.OnRetry(wait)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// runOnce runs one attempt, turning a panic into an error; delivered
// reports whether the attempt brought media.
func (s *Supervisor) runOnce(ctx context.Context) (delivered bool, err error) {
	sink := &onlineSink{Sink: s.cfg.Sink, online: func() {
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
	src, err := s.cfg.NewSource()
	if err != nil {
		return false, err
	}
	// CONECTANDO is reported while a camera has not yet delivered media; a
	// camera that was online stays OFFLINE while it is retried, and so does
	// one that is to connect to us (a push) while nothing has come.
	if !s.wasOnline.Load() && s.Status() != status.Permanent {
		if p, ok := src.(Passive); ok && p.Passive() {
			s.setStatus(status.Offline, ErrAwaitingCamera)
		} else {
			s.setStatus(status.Connecting, nil)
		}
	}
	err = src.Run(ctx, sink)
	if err == nil {
		err = errors.New("source ended")
	}
	return sink.seen.Load(), err
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
