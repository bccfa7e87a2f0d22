package live

import (
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/pion/ice/v4"
	"github.com/vigia/vigia/connlimit"
	"go.uber.org/zap"
)

// Defaults of the ICE-TCP listener's bounds (WebRTCConfig).
const (
	defaultTCPMaxConnections           = 1024
	defaultTCPMaxConnectionsPerAddress = 32
	defaultTCPFirstSTUNTimeout         = 5 * time.Second
	defaultTCPWriteBuffer              = 256 << 10
)

// listenTCPMux opens the ICE-TCP listener of cfg: connections past
// TCPMaxConnections in all or TCPMaxConnectionsPerAddress from one source
// are closed at once (counted by OnTCPRejected), a connection whose first
// STUN binding request does not come within TCPFirstSTUNTimeout is closed,
// and each session's connection queues at most TCPWriteBuffer bytes.
func (w *WebRTC) listenTCPMux() (*ice.TCPMuxDefault, error) {
	cfg := w.cfg
	ln, err := net.Listen("tcp", cfg.TCPMuxAddr)
	if err != nil {
		return nil, err
	}
	limited := connlimit.NewListener(ln, cfg.TCPMaxConnections, cfg.TCPMaxConnectionsPerAddress, cfg.OnTCPRejected)
	w.tcp = limited
	return ice.NewTCPMuxDefault(ice.TCPMuxParams{
		Listener:             &retryListener{Listener: limited, log: w.log},
		ReadBufferSize:       8,
		WriteBufferSize:      cfg.TCPWriteBuffer,
		FirstStunBindTimeout: cfg.TCPFirstSTUNTimeout,
		// A connection whose binding request names no session of the
		// node is held as long as a session may take to connect.
		AliveDurationForConnFromStun: cfg.ConnectTimeout,
	}), nil
}

// TCPAddr returns the address of the ICE-TCP listener, nil without one.
func (w *WebRTC) TCPAddr() net.Addr {
	if w.tcp == nil {
		return nil
	}
	return w.tcp.Addr()
}

// TCPConnections returns the ICE-TCP connections held now.
func (w *WebRTC) TCPConnections() int {
	if w.tcp == nil {
		return 0
	}
	return w.tcp.Open()
}

// retryListener keeps accepting through a shortage of descriptors or
// memory (EMFILE, ENFILE, ENOBUFS, ENOMEM), pausing as net/http does: pion's
// accept loop returns on the first error, which would end ICE-TCP for
// good.
type retryListener struct {
	net.Listener
	log *zap.Logger
}

// Accept returns the next connection, or the listener's first lasting error.
func (l *retryListener) Accept() (net.Conn, error) {
	var pause time.Duration
	for {
		nc, err := l.Listener.Accept()
		if err == nil || !transientAccept(err) {
			return nc, err
		}
		pause = min(max(2*pause, 5*time.Millisecond), time.Second)
		l.log.Warn("ice-tcp accept failed; retrying", zap.Error(err), zap.Duration("pause", pause))
		time.Sleep(pause)
	}
}

// transientAccept reports whether an accept error is a shortage that
// passes.
func transientAccept(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
