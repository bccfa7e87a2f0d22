package live

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeSocket returns the family of c's socket and whether the kernel
// takes UDP_SEGMENT on it (Linux 4.18 and later answer the option; an
// older kernel would ignore the control message and send one datagram of
// the whole run, so it is asked first).
func probeSocket(c *net.UDPConn) (ipv6, gso bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return false, false
	}
	_ = rc.Control(func(fd uintptr) {
		domain, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN)
		ipv6 = err == nil && domain == unix.AF_INET6
		_, err = unix.GetsockoptInt(int(fd), unix.SOL_UDP, unix.UDP_SEGMENT)
		gso = err == nil
	})
	return ipv6, gso
}

// sendGSO sends b to dst in one sendmsg whose UDP_SEGMENT control message
// has the kernel (or the network card) cut it into datagrams of seg bytes.
func (c *batchConn) sendGSO(b []byte, seg int, dst netip.AddrPort) error {
	var oob [unix.SizeofCmsghdr + 8]byte // CmsgSpace(2) on every Linux
	oob1 := oob[:unix.CmsgSpace(2)]
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob1[0]))
	h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	binary.NativeEndian.PutUint16(oob1[unix.CmsgLen(0):], uint16(seg))
	_, _, err := c.UDPConn.WriteMsgUDPAddrPort(b, oob1, dst)
	return err
}

// gsoRefused reports whether err says the socket or the route cannot
// segment: EIO (no checksum offload on the way out, IPsec), EINVAL (a
// segment larger than the path's MTU, too many segments), ENOPROTOOPT.
func gsoRefused(err error) bool {
	return errors.Is(err, unix.EIO) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOPROTOOPT)
}

// mmsghdr is Linux's struct mmsghdr.
type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [unsafe.Sizeof(uintptr(0)) - 4]byte
}

// sendEach sends the run's datagrams in sendmmsg calls, or one by one
// where sendmmsg is missing.
func (c *batchConn) sendEach(b []byte, seg, n int, dst netip.AddrPort) error {
	segs := segments(b, seg)
	rc, err := c.SyscallConn()
	if err != nil {
		return c.sendOneByOne(segs, dst)
	}
	var sa4 unix.RawSockaddrInet4
	var sa6 unix.RawSockaddrInet6
	var name *byte
	var namelen uint32
	if c.ipv6 {
		sa6.Family = unix.AF_INET6
		sa6.Addr = dst.Addr().As16() // IPv4 mapped into IPv6
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa6.Port))[:], dst.Port())
		name, namelen = (*byte)(unsafe.Pointer(&sa6)), unix.SizeofSockaddrInet6
	} else {
		if !dst.Addr().Unmap().Is4() {
			return c.sendOneByOne(segs, dst)
		}
		sa4.Family = unix.AF_INET
		sa4.Addr = dst.Addr().Unmap().As4()
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa4.Port))[:], dst.Port())
		name, namelen = (*byte)(unsafe.Pointer(&sa4)), unix.SizeofSockaddrInet4
	}
	iovs := make([]unix.Iovec, len(segs))
	msgs := make([]mmsghdr, len(segs))
	for i, s := range segs {
		iovs[i].Base = &s[0]
		iovs[i].SetLen(len(s))
		msgs[i].hdr.Name, msgs[i].hdr.Namelen = name, namelen
		msgs[i].hdr.Iov = &iovs[i]
		msgs[i].hdr.SetIovlen(1)
	}
	for sent := 0; sent < len(msgs); {
		var k int
		var errno unix.Errno
		werr := rc.Write(func(fd uintptr) bool {
			r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&msgs[sent])),
				uintptr(len(msgs)-sent), 0, 0, 0)
			if e == unix.EAGAIN {
				return false // wait until the socket can take more
			}
			k, errno = int(r), e
			return true
		})
		switch {
		case werr != nil:
			return werr
		case errno == unix.ENOSYS:
			return c.sendOneByOne(segs[sent:], dst)
		case errno != 0 || k <= 0:
			if errno == 0 {
				errno = unix.EIO
			}
			return &net.OpError{Op: "sendmmsg", Net: "udp", Source: c.LocalAddr(),
				Addr: net.UDPAddrFromAddrPort(dst), Err: errno}
		}
		sent += k
		c.s.mmsgPackets.Add(uint64(k))
		c.s.calls.Add(1)
	}
	return nil
}

// sendOneByOne sends each datagram in a call of its own.
func (c *batchConn) sendOneByOne(segs [][]byte, dst netip.AddrPort) error {
	for _, s := range segs {
		c.s.singlePackets.Add(1)
		if _, err := c.UDPConn.WriteToUDPAddrPort(s, dst); err != nil {
			return err
		}
	}
	return nil
}
