package bus

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/zap"
)

// Connection health settings: a dead server is noticed after about
// pingInterval*(maxPingsOut+1).
const (
	pingInterval = 5 * time.Second
	maxPingsOut  = 2
	drainTimeout = 5 * time.Second
)

// connect dials serverURL and returns a connection that reconnects forever.
// closed is closed when the connection reaches the closed state. The first
// dial is bounded by ctx and opts.ConnectTimeout.
func connect(ctx context.Context, serverURL string, opts Options, log *zap.Logger, closed chan struct{}) (*nats.Conn, error) {
	redacted := redactURL(serverURL)
	timeout := opts.ConnectTimeout
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < timeout {
			timeout = left
		}
	}
	if err := ctx.Err(); err != nil || timeout <= 0 {
		return nil, fmt.Errorf("%w: %s: %w", ErrConnect, redacted, context.DeadlineExceeded)
	}

	nopts := []nats.Option{
		nats.Name(opts.Name),
		nats.Timeout(timeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(opts.ReconnectWait),
		nats.ReconnectBufSize(DefaultReconnectBufSize),
		nats.PingInterval(pingInterval),
		nats.MaxPingsOutstanding(maxPingsOut),
		nats.DrainTimeout(drainTimeout),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected", zap.Error(err))
				return
			}
			log.Info("nats disconnected")
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", zap.String("url", redactURL(nc.ConnectedUrlRedacted())))
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			fields := []zap.Field{zap.Error(err)}
			if sub != nil {
				fields = append(fields, zap.String("subject", sub.Subject))
			}
			log.Error("nats async error", fields...)
		}),
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }),
	}
	if opts.Token != "" {
		nopts = append(nopts, nats.Token(opts.Token))
	}
	nc, err := nats.Connect(serverURL, nopts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConnect, redacted, err)
	}
	if err := ctx.Err(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%w: %s: %w", ErrConnect, redacted, err)
	}
	log.Info("nats connected", zap.String("url", redactURL(nc.ConnectedUrlRedacted())),
		zap.String("server_version", nc.ConnectedServerVersion()))
	return nc, nil
}

// redactURL returns a comma-separated list of NATS URLs with user information
// (user, password or token) removed.
func redactURL(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if !strings.Contains(p, "://") {
			p = "nats://" + p
		}
		u, err := url.Parse(p)
		if err != nil || u.Host == "" {
			parts[i] = "(invalid url)"
			continue
		}
		parts[i] = u.Scheme + "://" + u.Host
	}
	return strings.Join(parts, ",")
}
