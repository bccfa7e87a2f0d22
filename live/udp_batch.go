package live

import (
	"encoding/binary"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
)

// Limits of one batched send: every Linux with UDP_SEGMENT takes 64
// segments in one send (UDP_MAX_SEGMENTS; newer kernels more), and the
// datagram they are cut from must fit in IPv4's 65,507 bytes of UDP
// payload.
const (
	maxRunSegments = 64
	maxRunBytes    = 65000
)

// sendBatcher is what the node's batched UDP sockets (batchConn: each
// session's own and the mux's) share: the count of packets sent by each
// kind of system call, and the senders whose next RTCP packet is noted
// (watch). A viewer's frame leaves through them as runs of equal-sized
// datagrams, one system call per run (UDP segmentation offload), built
// by the viewer's goroutine (run); what pion writes (STUN, DTLS, RTCP,
// and the video of a session pion seals) is sent at once.
type sendBatcher struct {
	log *zap.Logger

	// Packets sent, by how: in a UDP_SEGMENT send, in a sendmmsg, or in
	// a send of their own (pion's packets and runs of one included).
	// Calls counts the system calls of the first two.
	gsoPackets, mmsgPackets, singlePackets, calls atomic.Uint64

	refusedLogged atomic.Bool // a refused UDP_SEGMENT send was logged at info

	// watched are the senders (by SSRC) whose next RTCP packet is noted
	// (watch); watching counts them, read without the lock.
	watching atomic.Int32
	wmu      sync.Mutex
	watched  map[uint32]*sighting
}

// sighting is where a watched sender's RTCP packet went: the socket, the
// address, and the packet as sent.
type sighting struct {
	conn *batchConn
	dst  netip.AddrPort
	pkt  []byte
}

func newSendBatcher(log *zap.Logger) *sendBatcher {
	return &sendBatcher{log: log, watched: map[uint32]*sighting{}}
}

// watch starts noting the next RTCP packet ssrc sends through one of the
// batcher's sockets; unwatch ends it and returns the sighting, nil for
// none. pion writes a session's packets to the socket before its write
// returns, so a session learns which socket and address its packets take
// by writing an RTCP packet between the two.
func (s *sendBatcher) watch(ssrc uint32) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, ok := s.watched[ssrc]; !ok {
		s.watched[ssrc] = nil
		s.watching.Add(1)
	}
}

func (s *sendBatcher) unwatch(ssrc uint32) *sighting {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	g, ok := s.watched[ssrc]
	if ok {
		delete(s.watched, ssrc)
		s.watching.Add(-1)
	}
	return g
}

// note records b, sent through c to dst, when it is a watched sender's
// first RTCP packet.
func (s *sendBatcher) note(c *batchConn, b []byte, dst netip.AddrPort) {
	// (S)RTCP: version 2, a packet type of 192–223 (RFC 5761, section 4);
	// the first 8 bytes, the sender's SSRC last, are clear.
	if len(b) < 8 || b[0]&0xc0 != 0x80 || b[1] < 192 || b[1] > 223 {
		return
	}
	ssrc := binary.BigEndian.Uint32(b[4:8])
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if g, ok := s.watched[ssrc]; ok && g == nil {
		s.watched[ssrc] = &sighting{conn: c, dst: dst, pkt: append([]byte(nil), b...)}
	}
}

// run is datagrams to one address through one socket that one system
// call can send: all of size seg but the last, which may be shorter. The
// datagrams are written into the run's buffer (put) and leave with send.
type run struct {
	conn  *batchConn
	dst   netip.AddrPort
	buf   []byte  // the datagrams back to back
	pool  *[]byte // buf's holder in runBuffers
	seg   int     // size of the first
	n     int
	short bool // the last is shorter than seg: nothing can follow
}

// runBuffers recycles the runs' buffers between frames.
var runBuffers = sync.Pool{New: func() any { b := make([]byte, 0, maxRunBytes); return &b }}

func (r *run) fits(c *batchConn, dst netip.AddrPort, size int) bool {
	if r.n == 0 {
		return true
	}
	return c == r.conn && dst == r.dst && !r.short && size <= r.seg &&
		r.n < maxRunSegments && len(r.buf)+size <= maxRunBytes
}

// put returns room for a datagram of size bytes to dst through c at the
// run's end, for the caller to fill. When the run cannot take it, the
// run is sent first; that send's error is returned with the room.
func (r *run) put(c *batchConn, dst netip.AddrPort, size int) ([]byte, error) {
	var err error
	if !r.fits(c, dst, size) {
		err = r.send()
	}
	if r.pool == nil {
		r.pool = runBuffers.Get().(*[]byte)
		r.buf = (*r.pool)[:0]
	}
	if r.n == 0 {
		r.conn, r.dst, r.seg = c, dst, size
	} else if size < r.seg {
		r.short = true
	}
	n := len(r.buf)
	r.buf = r.buf[:n+size]
	r.n++
	return r.buf[n : n+size : n+size], err
}

// send sends the run and empties it.
func (r *run) send() error {
	if r.n == 0 {
		return nil
	}
	err := r.conn.sendRun(r.buf, r.seg, r.n, r.dst)
	r.conn, r.buf, r.seg, r.n, r.short = nil, r.buf[:0], 0, 0, false
	return err
}

// release returns the run's buffer to the pool; the run must be empty.
func (r *run) release() {
	if r.pool != nil {
		*r.pool = r.buf[:0]
		runBuffers.Put(r.pool)
		r.pool, r.buf = nil, nil
	}
}

// batchConn is a UDP socket of the node's ICE agents (a session's own or
// the mux's): what pion reads from and writes to, the methods of
// *net.UDPConn with every write that takes an address going through
// writeTo, and what the node sends its sealed runs on (sendRun).
type batchConn struct {
	*net.UDPConn
	s *sendBatcher

	// gso is whether UDP_SEGMENT sends are still tried: the socket
	// supports them and none was refused.
	gso atomic.Bool
	// ipv6 is the socket's family; sendmmsg needs it for the addresses.
	ipv6 bool
	// writeGSO sends b cut into datagrams of seg bytes; tests replace it.
	writeGSO func(b []byte, seg int, dst netip.AddrPort) error
}

// wrap returns c as a batchConn of s.
func (s *sendBatcher) wrap(c *net.UDPConn) *batchConn {
	bc := &batchConn{UDPConn: c, s: s}
	bc.writeGSO = bc.sendGSO
	var gso bool
	bc.ipv6, gso = probeSocket(c)
	bc.gso.Store(gso)
	return bc
}

// writeTo sends b to dst, noting it when it is a watched sender's.
func (c *batchConn) writeTo(b []byte, dst netip.AddrPort) (int, error) {
	if c.s.watching.Load() > 0 {
		c.s.note(c, b, dst)
	}
	c.s.singlePackets.Add(1)
	return c.UDPConn.WriteToUDPAddrPort(b, dst)
}

// WriteToAddrPort is the write of pion's ICE candidates and UDP mux.
func (c *batchConn) WriteToAddrPort(b []byte, dst netip.AddrPort) (int, error) {
	return c.writeTo(b, dst)
}

// WriteToUDPAddrPort is writeTo.
func (c *batchConn) WriteToUDPAddrPort(b []byte, dst netip.AddrPort) (int, error) {
	return c.writeTo(b, dst)
}

// WriteTo is writeTo for a *net.UDPAddr.
func (c *batchConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	ua, ok := addr.(*net.UDPAddr)
	if !ok {
		return c.UDPConn.WriteTo(b, addr)
	}
	return c.WriteToUDP(b, ua)
}

// WriteToUDP is writeTo for a *net.UDPAddr.
func (c *batchConn) WriteToUDP(b []byte, addr *net.UDPAddr) (int, error) {
	ap := addr.AddrPort()
	if !ap.IsValid() {
		return c.UDPConn.WriteToUDP(b, addr)
	}
	return c.writeTo(b, ap)
}

// ReadFromAddrPort is the read of pion's ICE candidates and UDP mux.
func (c *batchConn) ReadFromAddrPort(b []byte) (int, netip.AddrPort, error) {
	return c.UDPConn.ReadFromUDPAddrPort(b)
}

// sendRun sends n datagrams of seg bytes (the last maybe shorter), back to
// back in b, to dst: in one UDP_SEGMENT send while the socket takes them,
// else in sendmmsg calls, else one by one.
func (c *batchConn) sendRun(b []byte, seg, n int, dst netip.AddrPort) error {
	if n == 1 {
		c.s.singlePackets.Add(1)
		_, err := c.UDPConn.WriteToUDPAddrPort(b, dst)
		return err
	}
	if c.gso.Load() {
		err := c.writeGSO(b, seg, dst)
		if !gsoRefused(err) {
			if err == nil {
				c.s.gsoPackets.Add(uint64(n))
				c.s.calls.Add(1)
			}
			return err
		}
		if c.gso.Swap(false) {
			// Once at info: every session's socket on the same route
			// would say the same.
			log := c.s.log.Debug
			if !c.s.refusedLogged.Swap(true) {
				log = c.s.log.Info
			}
			log("webrtc: UDP segmentation offload refused on a socket, its frames go out by sendmmsg",
				zap.Stringer("socket", c.LocalAddr()), zap.Error(err))
		}
	}
	return c.sendEach(b, seg, n, dst)
}

// segments cuts a run's buffer into its datagrams.
func segments(b []byte, seg int) [][]byte {
	out := make([][]byte, 0, (len(b)+seg-1)/seg)
	for len(b) > seg {
		out = append(out, b[:seg])
		b = b[seg:]
	}
	return append(out, b)
}
