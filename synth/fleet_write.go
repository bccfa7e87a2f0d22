package synth

import (
	"errors"
	"net"
	"time"
)

// errFleetClosed is returned for a write to a session that has ended.
var errFleetClosed = errors.New("fleet session closed")

// writeSoon writes bufs to nc, giving up after a millisecond: the fallback
// of connections that are not sockets of this system (in-memory pipes in
// tests, other systems). It returns the bytes written.
func writeSoon(nc net.Conn, bufs [][]byte) (int, error) {
	_ = nc.SetWriteDeadline(time.Now().Add(time.Millisecond))
	defer func() { _ = nc.SetWriteDeadline(time.Time{}) }()
	nb := make(net.Buffers, len(bufs))
	copy(nb, bufs)
	n, err := nb.WriteTo(nc)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		err = nil
	}
	return int(n), err
}
