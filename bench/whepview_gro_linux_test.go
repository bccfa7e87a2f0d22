package bench

import (
	"bytes"
	"encoding/binary"
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sendSegmented sends b from c to dst in one sendmsg cut by the kernel
// into datagrams of seg bytes (UDP_SEGMENT), as the node sends a run.
func sendSegmented(t *testing.T, c *net.UDPConn, b []byte, seg int, dst *net.UDPAddr) {
	t.Helper()
	oob := make([]byte, unix.CmsgSpace(2))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	binary.NativeEndian.PutUint16(oob[unix.CmsgLen(0):], uint16(seg))
	if _, _, err := c.WriteMsgUDP(b, oob, dst); err != nil {
		t.Skipf("this kernel does not segment UDP: %v", err)
	}
}

// TestGROConnSplitsRuns sends runs of datagrams in one UDP_SEGMENT send
// each, and single datagrams, over loopback to a groConn: every datagram
// comes out of it whole, in order, with its sender. With UDP_GRO off the
// kernel would cut the runs itself; with the splitting removed, a read
// would return a whole run.
func TestGROConnSplitsRuns(t *testing.T) {
	rc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	gc := newGROConn(rc)
	if gc == nil {
		rc.Close()
		t.Skip("this kernel refuses UDP_GRO")
	}
	defer gc.Close()
	g := gc.(*groConn)
	sc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	dst := rc.LocalAddr().(*net.UDPAddr)

	var want [][]byte
	datagram := func(size int) []byte {
		d := make([]byte, size)
		for i := range d {
			d[i] = byte(len(want)*7 + i)
		}
		want = append(want, d)
		return d
	}
	// A run of five 1,228-byte datagrams and a shorter last one, a
	// datagram alone, and a run of two.
	var run []byte
	for range 5 {
		run = append(run, datagram(1228)...)
	}
	run = append(run, datagram(300)...)
	sendSegmented(t, sc, run, 1228, dst)
	if _, err := sc.WriteToUDP(datagram(90), dst); err != nil {
		t.Fatal(err)
	}
	sendSegmented(t, sc, append(datagram(500), datagram(500)...), 500, dst)

	_ = g.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 1500)
	for i, w := range want {
		n, from, err := g.ReadFromAddrPort(buf)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		if !bytes.Equal(buf[:n], w) {
			t.Fatalf("datagram %d: %d bytes, want %d (%x…)", i, n, len(w), buf[:min(n, 8)])
		}
		if from.Port() != uint16(sc.LocalAddr().(*net.UDPAddr).Port) {
			t.Fatalf("datagram %d from %v", i, from)
		}
	}
}
