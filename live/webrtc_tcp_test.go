package live

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pion/webrtc/v4"

	"github.com/vigia/vigia/connlimit"
	"github.com/vigia/vigia/media"
	"github.com/vigia/vigia/testenv"
)

// openFDs returns the descriptors this process holds.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return len(ents)
}

// tcpFlood holds idle connections to an ICE-TCP listener, each closed on
// this side once the listener closes it.
type tcpFlood struct {
	open   atomic.Int64 // connections open on this side
	closed atomic.Int64 // connections the listener closed
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

// dial opens n connections to addr from the loopback address src; they
// send nothing.
func (f *tcpFlood) dial(t *testing.T, src, addr string, n int) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	for range n {
		nc, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial from %s: %v", src, err)
		}
		f.open.Add(1)
		f.mu.Lock()
		f.conns = append(f.conns, nc)
		f.mu.Unlock()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			_, err := io.Copy(io.Discard, nc)
			if err == nil || errors.Is(err, syscall.ECONNRESET) {
				f.closed.Add(1)
			}
			nc.Close()
			f.open.Add(-1)
		}()
	}
}

func (f *tcpFlood) stop() {
	f.mu.Lock()
	for _, nc := range f.conns {
		nc.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// TestICETCPFloodBounded: 400 idle connections from one address and 20
// from each of three others to the ICE-TCP listener. The listener holds
// at most its cap per address of them (the node's descriptors stay
// within the caps), counts the rest as rejected, and a viewer that can
// only use TCP still plays meanwhile.
func TestICETCPFloodBounded(t *testing.T) {
	var mu sync.Mutex
	rejected := map[string]int{}
	const perAddr = 8
	n := newRTCNode(t, WebRTCConfig{TCPMuxAddr: "127.0.0.1:0", TCPMaxConnections: 64,
		TCPMaxConnectionsPerAddress: perAddr, TCPFirstSTUNTimeout: time.Minute,
		OnTCPRejected: func(r string) { mu.Lock(); rejected[r]++; mu.Unlock() }})
	src := n.playH264(t, "cam")
	addr := n.w.TCPAddr().String()
	base := openFDs(t)

	f := &tcpFlood{}
	defer f.stop()
	f.dial(t, "127.0.0.2", addr, 400)
	for i := range 3 {
		f.dial(t, fmt.Sprintf("127.0.0.%d", 3+i), addr, 20)
	}
	const held = perAddr * 4
	testenv.WaitFor(t, 10*time.Second, "every connection accepted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return rejected[connlimit.ReasonPerAddress]+n.w.TCPConnections() >= 400+3*20
	})
	// The node's side: the process's descriptors less the flood's own.
	testenv.WaitFor(t, 10*time.Second, "the flood's connections past the caps closed", func() bool {
		return openFDs(t)-int(f.open.Load())-base <= held+8
	})
	if got := n.w.TCPConnections(); got != held {
		t.Errorf("listener holds %d connections, want %d (%d per address)", got, held, perAddr)
	}
	mu.Lock()
	if got := rejected[connlimit.ReasonPerAddress]; got != 400+3*20-held {
		t.Errorf("%d connections rejected per address, want %d", got, 400+3*20-held)
	}
	mu.Unlock()

	// A viewer over TCP, from an address of its own, plays through it.
	overTCP := dialWith(t, n.whepURL("cam", time.Now().Add(time.Hour)), media.H264,
		clientAPIWith(t, media.H264, func(se *webrtc.SettingEngine) {
			se.SetNetworkTypes([]webrtc.NetworkType{webrtc.NetworkTypeTCP4})
		}))
	overTCP.waitFrames(t, 2*src.gop(), 20*time.Second)
}

// TestICETCPFirstSTUNTimeout: a connection that sends no STUN binding
// request within TCPFirstSTUNTimeout is closed.
func TestICETCPFirstSTUNTimeout(t *testing.T) {
	n := newRTCNode(t, WebRTCConfig{TCPMuxAddr: "127.0.0.1:0", TCPFirstSTUNTimeout: 300 * time.Millisecond})
	f := &tcpFlood{}
	defer f.stop()
	f.dial(t, "127.0.0.1", n.w.TCPAddr().String(), 5)
	testenv.WaitFor(t, 10*time.Second, "idle connections closed by the node", func() bool { return f.closed.Load() == 5 })
	testenv.WaitFor(t, 5*time.Second, "their places freed", func() bool { return n.w.TCPConnections() == 0 })
}

// TestICETCPDefaults: the ICE-TCP bounds default to the documented values.
func TestICETCPDefaults(t *testing.T) {
	c := WebRTCConfig{}.withDefaults()
	if c.TCPMaxConnections != 1024 || c.TCPMaxConnectionsPerAddress != 32 ||
		c.TCPFirstSTUNTimeout != 5*time.Second || c.TCPWriteBuffer != 256<<10 {
		t.Errorf("defaults %d, %d, %v, %d", c.TCPMaxConnections, c.TCPMaxConnectionsPerAddress, c.TCPFirstSTUNTimeout, c.TCPWriteBuffer)
	}
}
