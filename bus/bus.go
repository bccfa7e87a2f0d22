package bus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// pingTimeout bounds Ping when its context has no deadline.
const pingTimeout = 5 * time.Second

// Bus is a connection to NATS with JetStream, and the embedded server when
// Vigia runs one. It is safe for concurrent use.
type Bus struct {
	log  *zap.Logger
	opts Options

	srv      *server.Server // nil with an external server
	storeDir string         // embedded JetStream directory
	tmpDir   bool           // storeDir was created by Open and is removed by Close
	url      string         // client URL, no credentials

	nc       *nats.Conn
	js       jetstream.JetStream
	ncClosed chan struct{} // closed when nc reaches the closed state

	mu  sync.RWMutex
	kvs map[string]jetstream.KeyValue

	closing   atomic.Bool
	closeOnce sync.Once
}

// Open connects to NATS (starting an embedded server when opts.URL is empty)
// and ensures the topology of docs/nats.md exists. An unreachable external
// server fails within ctx's deadline or opts.ConnectTimeout, with ErrConnect.
func Open(ctx context.Context, opts Options, log *zap.Logger) (*Bus, error) {
	if log == nil {
		log = zap.NewNop()
	}
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	b := &Bus{
		log:      log,
		opts:     opts,
		ncClosed: make(chan struct{}),
		kvs:      make(map[string]jetstream.KeyValue),
	}
	serverURL := opts.URL
	if serverURL == "" {
		if err := b.startServer(); err != nil {
			return nil, err
		}
		serverURL = b.srv.ClientURL()
	}
	b.url = redactURL(serverURL)

	nc, err := connect(ctx, serverURL, opts, log, b.ncClosed)
	if err != nil {
		b.stopServer()
		return nil, err
	}
	b.nc = nc
	js, err := jetstream.New(nc)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("%w: jetstream: %w", ErrConnect, err)
	}
	b.js = js
	if err := b.EnsureTopology(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// startServer starts the embedded server, creating a temporary store
// directory when none is configured.
func (b *Bus) startServer() error {
	b.storeDir = b.opts.StoreDir
	if b.storeDir == "" {
		dir, err := os.MkdirTemp("", "vigia-nats-*")
		if err != nil {
			return fmt.Errorf("%w: store dir: %w", ErrEmbedded, err)
		}
		b.storeDir, b.tmpDir = dir, true
	}
	srv, err := startEmbedded(b.opts.Listen, b.storeDir, b.opts.Token, b.opts.MaxConns, b.log.Named("nats-server"))
	if err != nil {
		b.removeTmp()
		return err
	}
	b.srv = srv
	b.log.Info("embedded nats started", zap.String("url", srv.ClientURL()), zap.String("store_dir", b.storeDir))
	return nil
}

// Conn returns the NATS connection.
func (b *Bus) Conn() *nats.Conn { return b.nc }

// JetStream returns the JetStream context.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

// KV returns one of the buckets BucketCameras, BucketCameraStatus,
// BucketNodes or BucketAssign, or nil for any other name.
func (b *Bus) KV(name string) jetstream.KeyValue {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.kvs[name]
}

// Describe returns a one-line description without credentials, e.g.
// "embedded nats 2.15.2 at nats://127.0.0.1:4222 (jetstream: /var/lib/vigia/nats)"
// or "nats://nats:4222".
func (b *Bus) Describe() string {
	if b.srv != nil {
		return fmt.Sprintf("embedded nats %s at %s (jetstream: %s)", server.VERSION, b.url, b.storeDir)
	}
	return b.url
}

// ClientURL returns the URL other processes use to reach this Bus's server
// (the embedded server's client URL, or the configured URL), without
// credentials; connect with Options.Token.
func (b *Bus) ClientURL() string { return b.url }

// Ping makes a round trip to the server. It fails with ErrNotConnected while
// reconnecting and ErrClosed after Close. A ctx without deadline gets 5 seconds.
func (b *Bus) Ping(ctx context.Context) error {
	if err := b.usable(); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pingTimeout)
		defer cancel()
	}
	if err := b.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}

// usable returns ErrClosed or ErrNotConnected when a call cannot go out now.
func (b *Bus) usable() error {
	if b.closing.Load() || b.nc.IsClosed() {
		return ErrClosed
	}
	if !b.nc.IsConnected() {
		return ErrNotConnected
	}
	return nil
}

// Close drains the connection (publishes in flight are sent), then shuts
// down the embedded server and waits for it, and removes a temporary store
// directory. Calling Close more than once is safe.
func (b *Bus) Close() {
	b.closeOnce.Do(func() {
		b.closing.Store(true)
		if b.nc != nil {
			if err := b.nc.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionReconnecting) {
				b.nc.Close()
			}
			select {
			case <-b.ncClosed:
			case <-time.After(drainTimeout + time.Second):
				b.log.Warn("nats drain did not finish; closing")
				b.nc.Close()
				select {
				case <-b.ncClosed:
				case <-time.After(time.Second):
				}
			}
		}
		b.stopServer()
	})
}

// stopServer shuts the embedded server down, if any, and removes a
// temporary store directory.
func (b *Bus) stopServer() {
	if b.srv != nil {
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
		b.log.Info("embedded nats stopped")
	}
	b.removeTmp()
}

// removeTmp removes the store directory if Open created it.
func (b *Bus) removeTmp() {
	if !b.tmpDir {
		return
	}
	if err := os.RemoveAll(b.storeDir); err != nil {
		b.log.Warn("remove nats store dir", zap.String("dir", b.storeDir), zap.Error(err))
	}
}
