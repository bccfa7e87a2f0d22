package live

import (
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

// sendBatcher lets a viewer's frame leave in as few system calls as the
// kernel allows. The viewer's goroutine opens the frame for the address
// its packets go to (begin), writes them through pion, which encrypts each
// and writes it synchronously to a batchConn, and closes the frame (end).
// While a frame is open, a batchConn holds the SRTP media packets written
// to its address instead of sending each, and sends them as runs of
// equal-sized datagrams, one system call per run (UDP segmentation
// offload): a run as soon as the next packet cannot join it, the last one
// in end. Every other packet (STUN, DTLS, RTCP), and media to an address
// with no frame open, is sent at once; nothing is held past end.
//
// Two sessions can send to the same address (a viewer whose one socket
// serves several sessions): their frames share one batch, which closes
// with the last of them.
type sendBatcher struct {
	log *zap.Logger

	mu   sync.RWMutex
	open map[netip.AddrPort]*frameBatch

	// Packets sent, by how: in a UDP_SEGMENT send, in a sendmmsg, or in
	// a send of their own (unbatched packets and runs of one included).
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
	return &sendBatcher{log: log, open: map[netip.AddrPort]*frameBatch{}, watched: map[uint32]*sighting{}}
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
	if len(b) < 8 {
		return
	}
	ssrc := uint32(b[4])<<24 | uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7])
	if !isRTCPFrom(b, ssrc) {
		return
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if g, ok := s.watched[ssrc]; ok && g == nil {
		s.watched[ssrc] = &sighting{conn: c, dst: dst, pkt: append([]byte(nil), b...)}
	}
}

// begin opens a frame to dst; the caller must end it.
func (s *sendBatcher) begin(dst netip.AddrPort) *frameBatch {
	dst = canonical(dst)
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.open[dst]
	if f == nil {
		f = &frameBatch{s: s, dst: dst}
		s.open[dst] = f
	}
	f.refs++
	return f
}

// end sends what f holds and closes the caller's frame. It returns the
// first error of the sends since the batch was last ended.
func (s *sendBatcher) end(f *frameBatch) error {
	s.mu.Lock()
	f.refs--
	last := f.refs == 0
	if last {
		delete(s.open, f.dst)
	}
	s.mu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flush()
	if last {
		// A writer that found f before it left the map sees closed and
		// sends itself.
		f.closed = true
		f.run.release()
	}
	err := f.err
	f.err = nil
	return err
}

// lookup returns the open batch of dst, nil for none.
func (s *sendBatcher) lookup(dst netip.AddrPort) *frameBatch {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.open) == 0 {
		return nil
	}
	return s.open[canonical(dst)]
}

// canonical is the form of an address the batches are keyed by: IPv4 as
// IPv4, whether or not the socket wrote it mapped into IPv6.
func canonical(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// isMedia reports whether b is an (S)RTP packet, the only kind a frame
// holds: version 2, and not one of the RTCP packet types (RFC 5761,
// section 4), which leave at once like STUN (first byte 0–3), DTLS
// (20–63) and TURN channel data (64–79).
func isMedia(b []byte) bool {
	return len(b) >= 12 && b[0]&0xc0 == 0x80 && (b[1] < 192 || b[1] > 223)
}

// frameBatch is the open frame (or frames) to one address.
type frameBatch struct {
	s    *sendBatcher
	dst  netip.AddrPort
	refs int // frames open, guarded by s.mu

	mu     sync.Mutex
	closed bool
	run    run
	err    error
}

// add holds b, written to c, for the frame; false when the batch has
// closed meanwhile and the caller must send b itself.
func (f *frameBatch) add(c *batchConn, b []byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	if !f.run.fits(c, len(b)) {
		f.flush()
	}
	f.run.add(c, b)
	return true
}

// flush sends the run held; f.mu is held.
func (f *frameBatch) flush() {
	if err := f.run.send(f.dst); err != nil && f.err == nil {
		f.err = err
	}
}

// run is datagrams to one address through one socket that one system
// call can send: all of size seg but the last, which may be shorter.
type run struct {
	conn  *batchConn
	buf   []byte // the datagrams back to back
	seg   int    // size of the first
	n     int
	short bool // the last is shorter than seg: nothing can follow
}

// runBuffers recycles the runs' buffers between frames.
var runBuffers = sync.Pool{New: func() any { b := make([]byte, 0, maxRunBytes); return &b }}

func (r *run) fits(c *batchConn, size int) bool {
	if r.n == 0 {
		return true
	}
	return c == r.conn && !r.short && size <= r.seg &&
		r.n < maxRunSegments && len(r.buf)+size <= maxRunBytes
}

func (r *run) add(c *batchConn, b []byte) {
	copy(r.grow(c, len(b)), b)
}

// grow adds a datagram of size bytes to the run and returns it for the
// caller to fill; the run must fit it.
func (r *run) grow(c *batchConn, size int) []byte {
	if r.buf == nil {
		r.buf = (*runBuffers.Get().(*[]byte))[:0]
	}
	if r.n == 0 {
		r.conn, r.seg = c, size
	} else if size < r.seg {
		r.short = true
	}
	n := len(r.buf)
	r.buf = r.buf[:n+size]
	r.n++
	return r.buf[n : n+size : n+size]
}

// send sends the run to dst and empties it.
func (r *run) send(dst netip.AddrPort) error {
	if r.n == 0 {
		return nil
	}
	err := r.conn.sendRun(r.buf, r.seg, r.n, dst)
	r.reset()
	return err
}

func (r *run) reset() {
	r.conn, r.buf, r.seg, r.n, r.short = nil, r.buf[:0], 0, 0, false
}

func (r *run) release() {
	if r.buf != nil {
		b := r.buf[:0]
		runBuffers.Put(&b)
		r.buf = nil
	}
}

// batchConn is a UDP socket of the node's ICE agents (a session's own or
// the mux's) whose media writes join the open frame of their address
// (sendBatcher). It is what pion reads from and writes to: the methods of
// *net.UDPConn, with every write that takes an address going through
// writeTo.
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

// writeTo sends b to dst, or holds it for dst's open frame.
func (c *batchConn) writeTo(b []byte, dst netip.AddrPort) (int, error) {
	if c.s.watching.Load() > 0 {
		c.s.note(c, b, dst)
	}
	if isMedia(b) {
		if f := c.s.lookup(dst); f != nil && f.add(c, b) {
			return len(b), nil
		}
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
