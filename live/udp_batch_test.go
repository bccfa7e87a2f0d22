package live

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/testenv"
)

// udpPeer is a receiving socket on loopback.
type udpPeer struct {
	conn *net.UDPConn
	addr netip.AddrPort

	mu         sync.Mutex
	got        [][]byte // read by collect
	collecting bool
}

func newUDPPeer(t testing.TB) *udpPeer {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetReadBuffer(4 << 20)
	return &udpPeer{conn: c, addr: c.LocalAddr().(*net.UDPAddr).AddrPort()}
}

// collect reads the peer's datagrams as they come, until the socket is
// closed, for recv: a sender that runs longer than the socket's buffer
// holds (a loaded machine, -race) loses nothing.
func (p *udpPeer) collect() {
	p.collecting = true
	go func() {
		buf := make([]byte, 70000)
		for {
			k, _, err := p.conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			p.mu.Lock()
			p.got = append(p.got, bytes.Clone(buf[:k]))
			p.mu.Unlock()
		}
	}()
}

// recv reads n datagrams (or takes them from collect); the deadline only
// keeps a broken test from hanging.
func (p *udpPeer) recv(t testing.TB, n int) [][]byte {
	t.Helper()
	if p.collecting {
		testenv.WaitFor(t, 20*time.Second, fmt.Sprintf("%d datagrams", n), func() bool {
			p.mu.Lock()
			defer p.mu.Unlock()
			return len(p.got) >= n
		})
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.got[:n:n]
	}
	_ = p.conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	out := make([][]byte, 0, n)
	buf := make([]byte, 70000)
	for len(out) < n {
		k, _, err := p.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			t.Fatalf("after %d of %d datagrams: %v", len(out), n, err)
		}
		out = append(out, bytes.Clone(buf[:k]))
	}
	return out
}

// newBatchSender returns a batcher and a socket of it on loopback.
func newBatchSender(t testing.TB) (*sendBatcher, *batchConn) {
	t.Helper()
	s := newSendBatcher(zap.NewNop())
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetWriteBuffer(4 << 20)
	return s, s.wrap(c)
}

// gsoSupported reports whether the kernel takes UDP_SEGMENT on a
// loopback socket.
func gsoSupported(t testing.TB) bool {
	_, c := newBatchSender(t)
	return c.gso.Load()
}

// mediaPacket returns an RTP-looking packet of size bytes (at least 12)
// carrying seq, filled with a pattern of seq and tag.
func mediaPacket(tag byte, seq uint16, size int) []byte {
	b := make([]byte, size)
	b[0], b[1] = 0x80, 96
	binary.BigEndian.PutUint16(b[2:], seq)
	for i := 12; i < size; i++ {
		b[i] = tag ^ byte(seq) ^ byte(i)
	}
	return b
}

// sizes expands runs of (count, size) pairs.
func sizes(pairs ...int) []int {
	var out []int
	for i := 0; i+1 < len(pairs); i += 2 {
		for range pairs[i] {
			out = append(out, pairs[i+1])
		}
	}
	return out
}

// sendFrame sends one frame of packets of the sizes given to dst through
// c, in runs, as a viewer's goroutine does; it returns what it sent.
func sendFrame(t testing.TB, c *batchConn, dst netip.AddrPort, tag byte, seq uint16, sz []int) [][]byte {
	t.Helper()
	var r run
	defer r.release()
	var sent [][]byte
	for i, n := range sz {
		p := mediaPacket(tag, seq+uint16(i), n)
		b, err := r.put(c, dst, n)
		if err != nil {
			t.Fatal(err)
		}
		copy(b, p)
		sent = append(sent, p)
	}
	if err := r.send(); err != nil {
		t.Fatal(err)
	}
	return sent
}

func sameDatagrams(t testing.TB, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d datagrams, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("datagram %d: %d bytes (seq %d), want %d bytes (seq %d)", i,
				len(got[i]), binary.BigEndian.Uint16(got[i][2:]), len(want[i]), binary.BigEndian.Uint16(want[i][2:]))
		}
	}
}

// TestBatchConnFrames: a frame's packets reach the peer intact and in
// order, whatever their sizes, and in fewer system calls than packets
// where the kernel segments.
func TestBatchConnFrames(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
	}{
		{"one packet", sizes(1, 700)},
		{"equal", sizes(10, 1228)},
		{"P-frame", sizes(12, 1228, 1, 431)},
		{"mixed", sizes(1, 40, 60, 1228, 1, 900, 3, 1228, 1, 17, 2, 1228)},
		{"more than one call holds", sizes(130, 1228, 1, 13)},
		{"small ones past 64 segments", sizes(200, 100)},
		{"growing", []int{12, 20, 30, 30, 40, 1228, 1300, 1300, 1299}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := newBatchSender(t)
			peer := newUDPPeer(t)
			want := sendFrame(t, c, peer.addr, 1, 100, tc.sizes)
			sameDatagrams(t, peer.recv(t, len(want)), want)
			if c.gso.Load() && len(tc.sizes) > 2 && s.gsoPackets.Load() == 0 {
				t.Errorf("no packet went by UDP segmentation offload on a socket that takes it")
			}
			if sent := s.gsoPackets.Load() + s.mmsgPackets.Load() + s.singlePackets.Load(); sent != uint64(len(want)) {
				t.Errorf("%d packets counted as sent, want %d", sent, len(want))
			}
			t.Logf("%d packets in %d batched calls (%d by GSO, %d by sendmmsg) and %d single sends",
				len(want), s.calls.Load(), s.gsoPackets.Load(), s.mmsgPackets.Load(), s.singlePackets.Load())
		})
	}
}

// TestBatchConnWatch: a watched sender's first RTCP packet through any of
// the batcher's sockets is noted with its socket and address; its RTP
// packets, RTCP of other senders, STUN and DTLS are not, and every packet
// leaves at once.
func TestBatchConnWatch(t *testing.T) {
	s, c := newBatchSender(t)
	other, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	c2 := s.wrap(other)
	peer := newUDPPeer(t)
	const ssrc = 0x01020304
	rtcpFrom := func(ssrc uint32, fill byte) []byte {
		b := append([]byte{0x80, 201, 0, 1, byte(ssrc >> 24), byte(ssrc >> 16), byte(ssrc >> 8), byte(ssrc)}, bytes.Repeat([]byte{fill}, 20)...)
		return b
	}
	rtp := mediaPacket(1, 7, 300)
	binary.BigEndian.PutUint32(rtp[4:], ssrc) // the SSRC where RTCP has it: still not RTCP
	stun := append([]byte{0x00, 0x01, 0x00, 0x00}, bytes.Repeat([]byte{7}, 16)...)
	dtls := append([]byte{22, 0xfe, 0xfd}, bytes.Repeat([]byte{8}, 40)...)
	mine, theirs := rtcpFrom(ssrc, 9), rtcpFrom(ssrc+1, 10)
	later := rtcpFrom(ssrc, 11)

	s.watch(ssrc)
	sent := [][]byte{stun, dtls, rtp, theirs, mine, later}
	for i, p := range sent {
		conn := c
		if i >= 4 {
			conn = c2 // the watched sender's packets go through the second socket
		}
		if _, err := conn.WriteTo(p, net.UDPAddrFromAddrPort(peer.addr)); err != nil {
			t.Fatal(err)
		}
	}
	sameDatagrams(t, peer.recv(t, len(sent)), sent)
	g := s.unwatch(ssrc)
	if g == nil || g.conn != c2 || g.dst != peer.addr || !bytes.Equal(g.pkt, mine) {
		t.Fatalf("sighting %+v, want the first RTCP packet of %#x through the second socket to %v", g, ssrc, peer.addr)
	}
	if s.watching.Load() != 0 || len(s.watched) != 0 {
		t.Errorf("still watching after unwatch: %d", s.watching.Load())
	}
	if _, err := c.WriteTo(mine, net.UDPAddrFromAddrPort(peer.addr)); err != nil {
		t.Fatal(err)
	}
	peer.recv(t, 1)
	if g := s.unwatch(ssrc); g != nil {
		t.Error("a packet was noted with no one watching")
	}
}

// TestBatchConnConcurrent: viewers sending frames at once through one
// socket (the UDP mux) and through sockets of their own, with pion's
// single writes beside them: every packet arrives, each peer's in order.
// Run under -race.
func TestBatchConnConcurrent(t *testing.T) {
	s, shared := newBatchSender(t)
	const viewers, frames = 8, 20
	type result struct {
		peer *udpPeer
		sent [][]byte
	}
	results := make([]result, viewers)
	var wg sync.WaitGroup
	errs := make(chan error, viewers+1)
	for v := range viewers {
		peer := newUDPPeer(t)
		peer.collect()
		c := shared
		if v%2 == 1 {
			own, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { own.Close() })
			c = s.wrap(own)
		}
		results[v].peer = peer
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sent [][]byte
			seq := uint16(0)
			var r run
			defer r.release()
			for i := range frames {
				n := 3 + (i*7+v)%40
				for j := range n {
					size := 1228
					if j == n-1 {
						size = 100 + i*13
					}
					p := mediaPacket(byte(v), seq, size)
					seq++
					b, err := r.put(c, peer.addr, size)
					if err != nil {
						errs <- err
						return
					}
					copy(b, p)
					sent = append(sent, p)
				}
				if err := r.send(); err != nil {
					errs <- err
					return
				}
			}
			results[v].sent = sent
		}()
	}
	stop := make(chan struct{})
	keepalive, peer0 := newUDPPeer(t), results[0].peer
	stuns := 0 // keepalives sent to viewer 0's peer
	var kwg sync.WaitGroup
	kwg.Add(1)
	go func() {
		defer kwg.Done()
		stun := []byte{0, 1, 0, 0, 0x21, 0x12, 0xa4, 0x42, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := shared.WriteToAddrPort(stun, keepalive.addr); err != nil {
				errs <- err
				return
			}
			if _, err := shared.WriteToAddrPort(stun, peer0.addr); err != nil {
				errs <- err
				return
			}
			stuns++
			if _, _, err := keepalive.conn.ReadFromUDPAddrPort(make([]byte, 100)); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	kwg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for v, r := range results {
		n := len(r.sent)
		if v == 0 {
			n += stuns
		}
		var media [][]byte
		for _, p := range r.peer.recv(t, n) {
			if p[0] == 0x80 { // not the STUN keepalives
				media = append(media, p)
			}
		}
		t.Run(fmt.Sprint("viewer ", v), func(t *testing.T) { sameDatagrams(t, media, r.sent) })
	}
}
