package bench

import (
	"encoding/binary"
	"net"
	"net/netip"
	"sync"

	"github.com/pion/transport/v5"
	"golang.org/x/sys/unix"
)

// groConn is a viewer's UDP socket that takes a run of datagrams sent in
// one UDP_SEGMENT send whole (UDP_GRO), as one buffer, and hands it to
// pion one datagram at a time. On loopback the kernel otherwise cuts the
// run in the sender's system call and delivers each datagram to the
// receiving socket there, which charges the node, not the viewer, for
// the viewer's receiving; a viewer on another machine costs the node none
// of it. Reads are serialized (pion reads a socket from one goroutine).
type groConn struct {
	*net.UDPConn

	mu   sync.Mutex
	buf  []byte // the last read: datagrams of seg bytes, the last maybe shorter
	off  int    // where its next datagram starts
	seg  int
	from netip.AddrPort
	oob  []byte
}

// newGROConn turns UDP_GRO on for c (Linux 5.0 and later); nil when the
// kernel refuses it.
func newGROConn(c *net.UDPConn) transport.UDPConn {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_UDP, unix.UDP_GRO, 1)
	}); err != nil || serr != nil {
		return nil
	}
	return &groConn{UDPConn: c, oob: make([]byte, unix.CmsgSpace(4))}
}

// ReadFromAddrPort returns the next datagram: the next of the last run
// read, or the first of a new read.
func (c *groConn) ReadFromAddrPort(b []byte) (int, netip.AddrPort, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off >= len(c.buf) {
		if c.buf == nil {
			c.buf = make([]byte, 65536)
		}
		n, oobn, _, from, err := c.UDPConn.ReadMsgUDPAddrPort(c.buf[:cap(c.buf)], c.oob)
		if err != nil {
			c.buf, c.off = c.buf[:0], 0
			return 0, from, err
		}
		c.buf, c.off, c.from, c.seg = c.buf[:n], 0, from, n
		if s := groSize(c.oob[:oobn]); s > 0 && s < n {
			c.seg = s
		}
		if n == 0 {
			return 0, from, nil
		}
	}
	k := min(c.seg, len(c.buf)-c.off)
	n := copy(b, c.buf[c.off:c.off+k])
	c.off += k
	return n, c.from, nil
}

// ReadFrom is ReadFromAddrPort for a net.Addr.
func (c *groConn) ReadFrom(b []byte) (int, net.Addr, error) {
	n, from, err := c.ReadFromAddrPort(b)
	if err != nil {
		return n, nil, err
	}
	return n, net.UDPAddrFromAddrPort(from), nil
}

// ReadFromUDPAddrPort is ReadFromAddrPort.
func (c *groConn) ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error) {
	return c.ReadFromAddrPort(b)
}

// groSize returns the segment size of a UDP_GRO control message in oob,
// 0 for none.
func groSize(oob []byte) int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_UDP && m.Header.Type == unix.UDP_GRO && len(m.Data) >= 4 {
			return int(binary.NativeEndian.Uint32(m.Data))
		}
	}
	return 0
}
