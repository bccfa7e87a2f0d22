//go:build linux

package synth

import (
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fleetIovecs is reusable space for the iovec array of one writev.
type fleetIovecs []unix.Iovec

// fleetWriter writes to a session's connection without waiting: one
// writev(2) on the socket's descriptor (non-blocking, as every socket of
// the Go runtime), taking what the socket buffer has room for. The
// descriptor is used directly, without the runtime's bookkeeping of a
// write: the session's mutex keeps writes and the connection's close
// apart (fleetSession.close), and a raw system call keeps the scheduler on
// its thread for a call that never blocks.
type fleetWriter struct {
	fd int // -1: not a socket (tests), written through nc
	nc net.Conn
}

func newFleetWriter(nc net.Conn) fleetWriter {
	w := fleetWriter{fd: -1, nc: nc}
	if sc, ok := nc.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			_ = rc.Control(func(fd uintptr) { w.fd = int(fd) })
		}
	}
	return w
}

// writev writes bufs back to back as far as the socket takes them now and
// returns the bytes written.
func (w fleetWriter) writev(iov *fleetIovecs, bufs [][]byte) (int, error) {
	if w.fd < 0 {
		return writeSoon(w.nc, bufs)
	}
	v := (*iov)[:0]
	for _, b := range bufs {
		if len(b) > 0 {
			e := unix.Iovec{Base: &b[0]}
			e.SetLen(len(b))
			v = append(v, e)
		}
	}
	*iov = v
	if len(v) == 0 {
		return 0, nil
	}
	r, _, errno := unix.RawSyscall(unix.SYS_WRITEV, uintptr(w.fd), uintptr(unsafe.Pointer(&v[0])), uintptr(len(v)))
	n := int(r)
	clear(v) // keep no buffer alive
	switch {
	case errno == unix.EAGAIN || errno == unix.EINTR:
		return 0, nil
	case errno != 0:
		return 0, errno
	}
	return n, nil
}
