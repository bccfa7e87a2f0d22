package connlimit

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/testenv"
)

func TestKey(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"192.0.2.7:1935", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:1935", "192.0.2.7"},
		{"[2001:db8:1:2:3:4:5:6]:1935", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff::1]:80", "2001:db8:1:2::/64"},
		{"[2001:db8:1:3::1]:80", "2001:db8:1:3::/64"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := Key(addr); got != tc.want {
			t.Errorf("Key(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
}

// dialFrom connects to addr from the loopback address src (127.0.0.0/8 is
// all loopback on Linux, so each src is another source for the listener).
func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// closedByPeer reports whether the peer closed nc: a read sees EOF or a
// reset (not data, not a timeout).
func closedByPeer(nc net.Conn) bool {
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := nc.Read(make([]byte, 1))
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// served checks that the server side of an admitted connection reaches
// its client.
func served(t *testing.T, server, client net.Conn) {
	t.Helper()
	if _, err := server.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(client, make([]byte, 1)); err != nil {
		t.Errorf("admitted connection: %v", err)
	}
}

// TestListenerCaps: past the per-address cap a source's connections are
// closed at once and counted; other sources still connect; past the total
// cap everyone's are; a closed connection frees its place.
func TestListenerCaps(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	rejected := map[string]int{}
	l := NewListener(ln, 4, 2, func(r string) { mu.Lock(); rejected[r]++; mu.Unlock() })
	defer l.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- nc
		}
	}()
	addr := ln.Addr().String()
	count := func(r string) int { mu.Lock(); defer mu.Unlock(); return rejected[r] }
	a1, a2 := dialFrom(t, "127.0.0.2", addr), dialFrom(t, "127.0.0.2", addr)
	s1, s2 := <-accepted, <-accepted
	if a3 := dialFrom(t, "127.0.0.2", addr); !closedByPeer(a3) {
		t.Error("third connection from 127.0.0.2 not closed")
	}
	if count(ReasonPerAddress) != 1 {
		t.Errorf("per-address rejections %d, want 1", count(ReasonPerAddress))
	}
	b1, b2 := dialFrom(t, "127.0.0.3", addr), dialFrom(t, "127.0.0.3", addr)
	s3, s4 := <-accepted, <-accepted
	if c1 := dialFrom(t, "127.0.0.4", addr); !closedByPeer(c1) {
		t.Error("fifth connection in all not closed")
	}
	if count(ReasonMaxConnections) != 1 {
		t.Errorf("max-connection rejections %d, want 1", count(ReasonMaxConnections))
	}
	served(t, s1, a1)
	served(t, s2, a2)
	served(t, s3, b1)
	served(t, s4, b2)
	// Closing one of 127.0.0.2's frees a place for it.
	s1.Close()
	s1.Close() // a second Close frees nothing more
	if l.Open() != 3 {
		t.Errorf("%d open after closing one, want 3", l.Open())
	}
	dialFrom(t, "127.0.0.2", addr)
	testenv.WaitFor(t, 5*time.Second, "the connection admitted", func() bool { return l.Open() == 4 })
	s2.Close()
}

// TestListenerExempt: a peer the listener exempts (a trusted reverse
// proxy) is not capped per address, and still counts in the total.
func TestListenerExempt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := NewListener(ln, 4, 1, nil)
	l.Exempt = func(a net.Addr) bool { return a.(*net.TCPAddr).IP.Equal(net.ParseIP("127.0.0.5")) }
	defer l.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- nc
		}
	}()
	addr := ln.Addr().String()
	var proxied []net.Conn
	for range 3 {
		c := dialFrom(t, "127.0.0.5", addr)
		s := <-accepted
		served(t, s, c)
		proxied = append(proxied, s)
	}
	if l.Open() != 3 {
		t.Errorf("%d open from the exempt peer, want 3 past a per-address cap of 1", l.Open())
	}
	other := dialFrom(t, "127.0.0.6", addr)
	served(t, <-accepted, other)
	if c := dialFrom(t, "127.0.0.5", addr); !closedByPeer(c) {
		t.Error("exempt peer's connection past the total cap not closed")
	}
	for _, s := range proxied {
		s.Close()
	}
	testenv.WaitFor(t, 5*time.Second, "places freed", func() bool { return l.Open() == 1 })
}
