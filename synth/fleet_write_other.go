//go:build !linux

package synth

import "net"

// fleetIovecs is unused space on systems without the vectored socket write.
type fleetIovecs struct{}

// fleetWriter writes to a session's connection with a short deadline.
type fleetWriter struct{ nc net.Conn }

func newFleetWriter(nc net.Conn) fleetWriter { return fleetWriter{nc: nc} }

// writev writes bufs back to back as far as the connection takes them
// within a millisecond and returns the bytes written.
func (w fleetWriter) writev(_ *fleetIovecs, bufs [][]byte) (int, error) {
	return writeSoon(w.nc, bufs)
}
