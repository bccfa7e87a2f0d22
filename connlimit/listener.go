package connlimit

import (
	"net"
	"sync"
)

// Reasons a connection is refused, as passed to OnRejected (metric
// labels of vigia_rejected_connections_total).
const (
	// ReasonMaxConnections: the listener holds its maximum of connections.
	ReasonMaxConnections = "max_connections"
	// ReasonPerAddress: the source address holds its maximum.
	ReasonPerAddress = "per_address_limit"
)

// Listener wraps a net.Listener: Accept closes at once the connections
// past Max in total or past PerAddress from one source, and returns the
// others; closing a returned connection frees its place.
type Listener struct {
	net.Listener

	// Max caps the connections open at once; 0 or less is no cap.
	Max int

	// OnRejected, optional, is called with a Reason* for each connection
	// closed by Accept.
	OnRejected func(reason string)

	// Exempt, optional, names peers that the per-address cap does not
	// apply to (the reverse proxies every client comes through); they
	// count in Max.
	Exempt func(addr net.Addr) bool

	perAddr *PerAddress
	mu      sync.Mutex
	open    int
}

// NewListener wraps ln with a total cap of max connections and perAddress
// connections per source (0 or less: no cap).
func NewListener(ln net.Listener, max, perAddress int, onRejected func(reason string)) *Listener {
	return &Listener{Listener: ln, Max: max, OnRejected: onRejected, perAddr: NewPerAddress(perAddress)}
}

// Accept returns the next connection within the caps.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := Key(nc.RemoteAddr())
		if l.Exempt != nil && l.Exempt(nc.RemoteAddr()) {
			key = "" // not capped per address
		}
		if reason := l.admit(key); reason != "" {
			if l.OnRejected != nil {
				l.OnRejected(reason) // before the close: counted once the peer sees it
			}
			_ = nc.Close()
			continue
		}
		return &conn{Conn: nc, l: l, key: key}, nil
	}
}

// admit counts a connection from key, or returns why it is refused.
func (l *Listener) admit(key string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Max > 0 && l.open >= l.Max {
		return ReasonMaxConnections
	}
	if key != "" && !l.perAddr.Acquire(key) {
		return ReasonPerAddress
	}
	l.open++
	return ""
}

// Open returns the connections held now.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

func (l *Listener) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if key != "" {
		l.perAddr.Release(key)
	}
}

// conn frees its place in the listener when closed.
type conn struct {
	net.Conn
	l    *Listener
	key  string
	once sync.Once
}

// Close closes the connection and, the first time, frees its place.
func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key) })
	return err
}
