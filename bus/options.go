package bus

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// Defaults applied by Open to zero-valued Options fields.
const (
	// DefaultListen is the embedded server's client address.
	DefaultListen = "127.0.0.1:4222"
	// DefaultName is the connection name shown by the server.
	DefaultName = "vigia"
	// DefaultReconnectWait is the pause between reconnect attempts.
	DefaultReconnectWait = time.Second
	// DefaultConnectTimeout bounds the first connection (and each dial).
	DefaultConnectTimeout = 5 * time.Second
	// DefaultReconnectBufSize is the bytes of core publishes kept while reconnecting.
	DefaultReconnectBufSize = 8 << 20
	// DefaultMaxConns is the embedded server's client cap: a cluster's
	// nodes and tools use a few connections each, and nats-server's own
	// default (65536) would let clients take every file descriptor the
	// process has for cameras and the spool.
	DefaultMaxConns = 1024
)

// Options configure Open.
type Options struct {
	// URL of an external NATS server or cluster (comma-separated). Empty starts
	// an embedded nats-server with JetStream. It defaults to empty.
	URL string

	// Token authenticates the connection. With an embedded server the server
	// also requires it. It is never logged. It defaults to no authentication.
	Token string

	// Listen is the embedded server's client address, host:port; port 0 picks
	// a free port. Ignored when URL is set. It defaults to 127.0.0.1:4222.
	Listen string

	// MaxConns caps the embedded server's clients; past it new connections
	// are refused. Ignored when URL is set. It defaults to 1024.
	MaxConns int

	// StoreDir is the embedded server's JetStream directory. Empty uses a new
	// temporary directory removed by Close. Ignored when URL is set.
	StoreDir string

	// Name is the connection name shown by the server. It defaults to "vigia".
	Name string

	// Replicas of every stream and bucket. Must be 1 with an embedded server.
	// It defaults to 1.
	Replicas int

	// ReconnectWait is the pause between reconnect attempts. It defaults to 1 second.
	ReconnectWait time.Duration

	// ConnectTimeout bounds the first connection when the context passed to
	// Open has no earlier deadline. It defaults to 5 seconds.
	ConnectTimeout time.Duration
}

// withDefaults returns o with zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.URL == "" && o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.ReconnectWait == 0 {
		o.ReconnectWait = DefaultReconnectWait
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	return o
}

// validate checks o after withDefaults.
func (o Options) validate() error {
	if o.Replicas < 1 || o.Replicas > 5 {
		return fmt.Errorf("%w: replicas must be 1 to 5, got %d", ErrInvalidOptions, o.Replicas)
	}
	if o.ReconnectWait < 0 {
		return fmt.Errorf("%w: reconnect_wait must not be negative", ErrInvalidOptions)
	}
	if o.ConnectTimeout < 0 {
		return fmt.Errorf("%w: connect_timeout must not be negative", ErrInvalidOptions)
	}
	if o.URL != "" {
		return nil
	}
	if o.Replicas != 1 {
		return fmt.Errorf("%w: replicas must be 1 with the embedded server, got %d", ErrInvalidOptions, o.Replicas)
	}
	host, _, err := splitListen(o.Listen)
	if err != nil {
		return err
	}
	if o.Token == "" && !loopback(host) {
		return fmt.Errorf("%w: the embedded server would listen on %s, beyond loopback, without a token: set nats.token (every client must then present it) or listen on 127.0.0.1",
			ErrInvalidOptions, o.Listen)
	}
	return nil
}

// loopback reports whether a listen host only takes connections from this
// machine: localhost or a loopback address (not empty, 0.0.0.0 or ::,
// which listen on every interface).
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// splitListen parses host:port for the embedded server; port 0 becomes -1,
// nats-server's "pick a free port".
func splitListen(listen string) (string, int, error) {
	host, portStr, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, fmt.Errorf("%w: listen %q: %w", ErrInvalidOptions, listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%w: listen %q: bad port", ErrInvalidOptions, listen)
	}
	if port == 0 {
		port = -1
	}
	return host, port, nil
}
