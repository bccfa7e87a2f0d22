package s3

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"go.uber.org/zap"
)

// retryPolicy is how an operation is retried.
type retryPolicy struct {
	attempts int
	base     time.Duration
	max      time.Duration
}

func newRetryPolicy(opts Options) retryPolicy {
	p := retryPolicy{attempts: opts.MaxAttempts, base: opts.RetryBase, max: opts.RetryMax}
	if p.attempts <= 0 {
		p.attempts = DefaultMaxAttempts
	}
	if p.base <= 0 {
		p.base = DefaultRetryBase
	}
	if p.max <= 0 {
		p.max = DefaultRetryMax
	}
	return p
}

// backoff returns the wait before retry number n (1 for the first retry):
// base doubled n-1 times, capped, with up to 20% jitter off.
func (p retryPolicy) backoff(n int) time.Duration {
	d := p.base
	for i := 1; i < n && d < p.max; i++ {
		d *= 2
	}
	d = min(d, p.max)
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// do runs fn until it succeeds, fails for good, the attempts run out or
// ctx ends. It returns fn's last error.
func (s *S3) do(ctx context.Context, op, key string, fn func() error) error {
	return s.doWith(ctx, op, key, s.retry.attempts, nil, fn)
}

// doWith is do with an attempt count and a hook run before each retry; a
// hook error stops the retries.
func (s *S3) doWith(ctx context.Context, op, key string, attempts int, before func() error, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || attempt >= attempts || !transient(err) || ctx.Err() != nil {
			return err
		}
		wait := s.retry.backoff(attempt)
		s.log.Warn("s3 request failed, retrying",
			zap.String("op", op), zap.String("key", key), zap.Int("attempt", attempt),
			zap.Duration("wait", wait), zap.Error(err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		if before != nil {
			if berr := before(); berr != nil {
				return errors.Join(err, berr)
			}
		}
	}
}

// transient reports whether err may go away if the request is sent again.
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var er minio.ErrorResponse
	if errors.As(err, &er) && (er.Code != "" || er.StatusCode != 0) {
		switch er.Code {
		case "RequestTimeout", "RequestTimeTooSkewed", "SlowDown", "SlowDownWrite", "SlowDownRead",
			"InternalError", "ServiceUnavailable", "Throttling", "ThrottlingException",
			"RequestLimitExceeded", "XMinioServerNotInitialized", "XMinioReadQuorum", "XMinioWriteQuorum":
			return true
		}
		return er.StatusCode >= http.StatusInternalServerError ||
			er.StatusCode == http.StatusTooManyRequests || er.StatusCode == http.StatusRequestTimeout
	}
	var ne net.Error
	return errors.As(err, &ne) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}
