package live

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
)

// TestBatchConnGSORefused: a socket whose UDP_SEGMENT send fails with EIO
// (no checksum offload on the route) sends the same frames by sendmmsg,
// and does not try segmentation again.
func TestBatchConnGSORefused(t *testing.T) {
	for _, errno := range []unix.Errno{unix.EIO, unix.EINVAL} {
		t.Run(errno.Error(), func(t *testing.T) {
			s, c := newBatchSender(t)
			c.gso.Store(true)
			refusals := 0
			c.writeGSO = func([]byte, int, netip.AddrPort) error {
				refusals++
				return &net.OpError{Op: "write", Net: "udp", Err: os.NewSyscallError("sendmsg", errno)}
			}
			peer := newUDPPeer(t)
			for i := range 3 {
				want := sendFrame(t, c, peer.addr, byte(i), uint16(i*100), sizes(1, 40, 30, 1228, 1, 333))
				sameDatagrams(t, peer.recv(t, len(want)), want)
			}
			if refusals != 1 {
				t.Errorf("segmentation tried %d times, want once", refusals)
			}
			if c.gso.Load() {
				t.Error("the socket still tries segmentation after a refusal")
			}
			if s.mmsgPackets.Load() == 0 || s.gsoPackets.Load() != 0 {
				t.Errorf("%d packets by sendmmsg, %d by GSO: want all runs by sendmmsg", s.mmsgPackets.Load(), s.gsoPackets.Load())
			}
		})
	}
}

// TestBatchConnOtherError: a send error other than a refusal is the
// run's error, and segmentation goes on being tried.
func TestBatchConnOtherError(t *testing.T) {
	_, c := newBatchSender(t)
	c.gso.Store(true)
	c.writeGSO = func([]byte, int, netip.AddrPort) error {
		return &net.OpError{Op: "write", Net: "udp", Err: os.NewSyscallError("sendmsg", unix.ENOBUFS)}
	}
	peer := newUDPPeer(t)
	var r run
	defer r.release()
	for i := range 4 {
		b, _ := r.put(c, peer.addr, 1228)
		copy(b, mediaPacket(1, uint16(i), 1228))
	}
	if err := r.send(); !errors.Is(err, unix.ENOBUFS) || !c.gso.Load() {
		t.Fatalf("send: %v, segmentation still tried: %v; want ENOBUFS and true", err, c.gso.Load())
	}
}

// TestBatchConnIPv6: a dual-stack socket sends a frame to an IPv4 peer
// and to an IPv6 one, by segmentation and by sendmmsg.
func TestBatchConnIPv6(t *testing.T) {
	for _, gso := range []bool{true, false} {
		s := newSendBatcher(zap.NewNop())
		raw, err := net.ListenUDP("udp", &net.UDPAddr{})
		if err != nil {
			t.Skip("no dual-stack socket:", err)
		}
		t.Cleanup(func() { raw.Close() })
		c := s.wrap(raw)
		if !c.ipv6 {
			t.Skip("the socket is not IPv6")
		}
		c.gso.Store(c.gso.Load() && gso)
		v4 := newUDPPeer(t)
		want := sendFrame(t, c, v4.addr, 1, 0, sizes(5, 1228, 1, 13))
		sameDatagrams(t, v4.recv(t, len(want)), want)
		c6, err := net.ListenUDP("udp6", &net.UDPAddr{IP: net.IPv6loopback})
		if err != nil {
			continue
		}
		t.Cleanup(func() { c6.Close() })
		v6 := &udpPeer{conn: c6, addr: c6.LocalAddr().(*net.UDPAddr).AddrPort()}
		want = sendFrame(t, c, v6.addr, 2, 0, sizes(5, 1228, 1, 13))
		sameDatagrams(t, v6.recv(t, len(want)), want)
	}
}
