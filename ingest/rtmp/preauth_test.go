package rtmp

import (
	"net"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/connlimit"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/ingest/rtmp/wire"
	"github.com/vigia/vigia/testenv"
)

// preAuthServer starts a server with small limits before authentication
// (edit changes them) and the push camera "cam"; the third result collects
// the rejections.
func preAuthServer(t *testing.T, edit func(*ServerConfig)) (*Server, *refusals, *refusals) {
	t.Helper()
	errs, rej := &refusals{}, &refusals{}
	cfg := ServerConfig{Addr: "127.0.0.1:0", Keys: testKeys(t), ReadTimeout: 3 * time.Second, Hold: 2 * time.Second,
		AuthTimeout: 2 * time.Second, OnError: errs.add, OnRejected: rej.add, Log: zap.NewNop()}
	if edit != nil {
		edit(&cfg)
	}
	s := NewServer(cfg)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	runPush(t, s, ingest.Camera{ID: "cam"}, &collector{})
	return s, errs, rej
}

// dialFrom connects to s from the loopback address src (each 127.x.y.z is
// another source address) and completes the handshake.
func dialFrom(t *testing.T, s *Server, src string) (net.Conn, *wire.Conn) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	nc, err := d.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := wire.ClientHandshake(nc); err != nil {
		t.Fatalf("handshake from %s: %v", src, err)
	}
	return nc, wire.NewConn(nc, wire.Limits{})
}

// startMessage is the first chunk (128 bytes) of a video message of
// length bytes on chunk stream csid.
func startMessage(csid byte, length int) []byte {
	b := []byte{csid, 0, 0, 0, byte(length >> 16), byte(length >> 8), byte(length), 9, 1, 0, 0, 0}
	return append(b, make([]byte, 128)...)
}

// waitRejected waits until reason was counted.
func waitRejected(t *testing.T, rej *refusals, reason string) {
	t.Helper()
	testenv.WaitFor(t, 10*time.Second, reason+" counted", func() bool { return slices.Contains(rej.list(), reason) })
}

// TestPreAuthLimits: before its publish is authenticated a connection may
// send only small messages on a few chunk streams, within one deadline
// that traffic does not renew; past them it is closed and the reason
// counted as a rejection (not as an error).
func TestPreAuthLimits(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		send func(t *testing.T, nc net.Conn, c *wire.Conn)
		want string
	}{
		{"message over 8 KiB", func(t *testing.T, nc net.Conn, c *wire.Conn) {
			_, _ = nc.Write(startMessage(3, 8<<10+1))
		}, RejectedPreAuthTooLarge},
		{"three 8 MiB messages half sent", func(t *testing.T, nc net.Conn, c *wire.Conn) {
			for cs := byte(3); cs < 6; cs++ {
				_, _ = nc.Write(startMessage(cs, 8<<20))
			}
		}, RejectedPreAuthTooLarge},
		{"ninth chunk stream", func(t *testing.T, nc net.Conn, c *wire.Conn) {
			for cs := byte(3); cs < 12; cs++ {
				_, _ = nc.Write(startMessage(cs, 200))
			}
		}, RejectedPreAuthStreams},
		{"three messages of 8000 bytes half sent", func(t *testing.T, nc net.Conn, c *wire.Conn) {
			for cs := byte(3); cs < 6; cs++ {
				_, _ = nc.Write(startMessage(cs, 8000))
			}
		}, RejectedPreAuthStreams},
		{"silent after the handshake", func(t *testing.T, nc net.Conn, c *wire.Conn) {}, RejectedPreAuthTimeout},
		{"a small command every 100 ms", func(t *testing.T, nc net.Conn, c *wire.Conn) {
			if err := c.WriteCommand(0, "connect", 1, wire.Object{{Name: "app", Value: "live"}}); err != nil {
				t.Fatal(err)
			}
			// Each command used to renew the read deadline; this goes on
			// until the server closes the connection.
			go func() {
				for i := 0; ; i++ {
					if c.WriteCommand(0, "_checkbw", float64(i+2), nil) != nil {
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			}()
		}, RejectedPreAuthTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, errs, rej := preAuthServer(t, nil)
			nc, c := dialFrom(t, s, "127.0.0.1")
			_ = nc.SetDeadline(time.Time{})
			tc.send(t, nc, c)
			closedByServer(t, nc)
			waitRejected(t, rej, tc.want)
			if got := rej.list(); len(got) != 1 {
				t.Errorf("rejections %v, want [%s]", got, tc.want)
			}
			if got := errs.list(); len(got) != 0 {
				t.Errorf("also counted as errors: %v", got)
			}
			testenv.WaitFor(t, 5*time.Second, "the budget given back", func() bool { return s.PreAuthBuffered() == 0 })
		})
	}
}

// TestPreAuthSilentTCP: a connection that never starts the handshake is
// closed at the deadline too.
func TestPreAuthSilentTCP(t *testing.T) {
	t.Parallel()
	s, _, rej := preAuthServer(t, nil)
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	closedByServer(t, nc)
	waitRejected(t, rej, RejectedPreAuthTimeout)
}

// TestPreAuthBudget: connections not yet authenticated share one budget;
// the one that would exceed it is closed; a closed connection gives its
// share back.
func TestPreAuthBudget(t *testing.T) {
	t.Parallel()
	s, _, rej := preAuthServer(t, func(c *ServerConfig) {
		c.PreAuthBudget = 20000
		c.AuthTimeout = time.Minute
	})
	a, _ := dialFrom(t, s, "127.0.0.2")
	_, _ = a.Write(startMessage(3, 8000))
	testenv.WaitFor(t, 5*time.Second, "8000 bytes drawn", func() bool { return s.PreAuthBuffered() == 8000 })
	b, _ := dialFrom(t, s, "127.0.0.3")
	_, _ = b.Write(startMessage(3, 8000))
	testenv.WaitFor(t, 5*time.Second, "16000 bytes drawn", func() bool { return s.PreAuthBuffered() == 16000 })
	c, _ := dialFrom(t, s, "127.0.0.4")
	_, _ = c.Write(startMessage(3, 8000))
	closedByServer(t, c)
	waitRejected(t, rej, RejectedPreAuthBudget)
	if got := s.PreAuthBuffered(); got != 16000 {
		t.Errorf("%d bytes drawn after the refusal, want 16000", got)
	}
	a.Close()
	testenv.WaitFor(t, 5*time.Second, "the closed connection's share given back", func() bool { return s.PreAuthBuffered() == 8000 })
	d, _ := dialFrom(t, s, "127.0.0.4")
	_, _ = d.Write(startMessage(3, 8000))
	testenv.WaitFor(t, 5*time.Second, "a new connection drawing", func() bool { return s.PreAuthBuffered() == 16000 })
}

// TestPendingPerAddress: one address may hold MaxPendingPerAddress
// connections not yet authenticated; more are closed at accept and
// counted. Other addresses are not affected, and a connection that
// published with its key frees its place.
func TestPendingPerAddress(t *testing.T) {
	t.Parallel()
	s, _, rej := preAuthServer(t, func(c *ServerConfig) {
		c.MaxPendingPerAddress = 2
		c.AuthTimeout = time.Minute
	})
	key := connlimit.Key(&net.TCPAddr{IP: net.ParseIP("127.0.0.1")})
	publishing(t, s) // from 127.0.0.1, authenticated
	if n := s.pending.Count(key); n != 0 {
		t.Errorf("a publishing connection counted as pending (%d)", n)
	}
	dialFrom(t, s, "127.0.0.1")
	dialFrom(t, s, "127.0.0.1")
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	closedByServer(t, nc)
	waitRejected(t, rej, RejectedPerAddress)
	dialFrom(t, s, "127.0.0.2") // another address still gets in
}

// TestMaxConnections: past MaxConns connections, authenticated or not, a
// new one is closed at accept and counted.
func TestMaxConnections(t *testing.T) {
	t.Parallel()
	s, _, rej := preAuthServer(t, func(c *ServerConfig) {
		c.MaxConns = 2
		c.AuthTimeout = time.Minute
	})
	publishing(t, s)
	dialFrom(t, s, "127.0.0.2")
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	closedByServer(t, nc)
	waitRejected(t, rej, RejectedMaxConnections)
}
