//go:build !linux

package live

import (
	"errors"
	"net"
	"net/netip"
)

// errGSOUnsupported: UDP segmentation offload is Linux's (never returned,
// since probeSocket says no).
var errGSOUnsupported = errors.New("udp segmentation offload is not supported here")

// probeSocket: batched sends are Linux's; elsewhere a frame's datagrams
// are held like on Linux and sent one by one.
func probeSocket(*net.UDPConn) (ipv6, gso bool) { return false, false }

func (c *batchConn) sendGSO([]byte, int, netip.AddrPort) error { return errGSOUnsupported }

func gsoRefused(err error) bool { return err == errGSOUnsupported }

// sendEach sends the run's datagrams one by one.
func (c *batchConn) sendEach(b []byte, seg, _ int, dst netip.AddrPort) error {
	for _, s := range segments(b, seg) {
		c.s.singlePackets.Add(1)
		if _, err := c.UDPConn.WriteToUDPAddrPort(s, dst); err != nil {
			return err
		}
	}
	return nil
}
