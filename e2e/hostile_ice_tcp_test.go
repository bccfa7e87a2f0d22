package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// freeTCPAddr returns a loopback address with a port free a moment ago.
func freeTCPAddr(t *testing.T) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.FreePort(t)))
}

// heldOn returns how many TCP connections accepted on addr's port are
// still open on the accepting side (established, or closed by the peer
// and not yet by the node, and accepted: each holds a descriptor), from the kernel's
// table (/proc/self/net/tcp, IPv4). Unlike the process's descriptors, it
// counts the node's listener only, whatever the other tests running in
// this process hold.
func heldOn(t *testing.T, addr string) int {
	t.Helper()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/net/tcp")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	want := fmt.Sprintf(":%04X", ap.Port())
	n := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		f := strings.Fields(line)
		// local_address rem_address st (01 established, 08 close wait)
		// ... inode: 0 while in the listener's backlog, not accepted
		// yet (no descriptor).
		if len(f) > 9 && strings.HasSuffix(f[1], want) && (f[3] == "01" || f[3] == "08") && f[9] != "0" {
			n++
		}
	}
	return n
}

// TestICETCPFlood: 4,200 idle connections opened from one address as fast as
// eight clients can, and more for 10 s, to the ICE-TCP listener of a node
// recording a camera. The node holds at most
// webrtc.tcp_max_connections_per_address of them (its descriptors stay
// bounded), closes the others at once and counts them, keeps answering
// /healthz, and the camera's recording covers the flood.
func TestICETCPFlood(t *testing.T) {
	t.Parallel()
	m := testenv.SharedMinIO(t)
	cam := startSynth(t, synth.CameraSpec{Path: "cam", Codec: "h264", Small: true})
	c := s3Config(t, m)
	c.Motion.Enabled = false
	c.WebRTC.TCPMux = freeTCPAddr(t)
	log, _ := testLogger(t)
	a := startApp(t, c, log)
	if err := a.RecordCamera(ingest.Camera{ID: "cam", URL: cam.URL("cam"), Trusted: true}); err != nil {
		t.Fatal(err)
	}
	st := openS3(t, c)
	waitSegments(t, st, "cam", 2, 60*time.Second)

	var attempts atomic.Int64 // the flood's dials
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	from := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := net.Dialer{Timeout: 2 * time.Second}
			for ctx.Err() == nil {
				if attempts.Load() >= 4200 { // then one a worker every 50 ms
					select {
					case <-ctx.Done():
						return
					case <-time.After(50 * time.Millisecond):
					}
				}
				nc, err := d.DialContext(ctx, "tcp", c.WebRTC.TCPMux)
				if err != nil {
					continue
				}
				attempts.Add(1)
				wg.Add(1)
				go func() { // held until the node closes it
					defer wg.Done()
					stopRead := context.AfterFunc(ctx, func() { nc.Close() })
					_, _ = nc.Read(make([]byte, 1))
					stopRead()
					nc.Close()
				}()
			}
		}()
	}
	peak, healthy, probes := 0, 0, 0
	hc := &http.Client{Timeout: 2 * time.Second}
	for ctx.Err() == nil {
		peak = max(peak, heldOn(t, c.WebRTC.TCPMux))
		probes++
		if resp, err := hc.Get(a.URL() + "/healthz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				healthy++
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	to := time.Now()
	wg.Wait()
	t.Logf("%d connections opened in %v; the node held at most %d of them; /healthz answered %d of %d",
		attempts.Load(), to.Sub(from).Round(time.Millisecond), peak, healthy, probes)
	perAddr := c.WebRTC.TCPMaxConnectionsPerAddress
	if attempts.Load() < int64(4*perAddr) {
		t.Fatalf("only %d connections opened", attempts.Load())
	}
	// Besides the connections held: those accepted and not closed yet
	// when the table was read.
	if peak > perAddr+64 {
		t.Errorf("the node held %d ICE-TCP connections under the flood, want at most %d and those being closed", peak, perAddr)
	}
	if healthy < probes-1 {
		t.Errorf("/healthz answered %d of %d probes during the flood", healthy, probes)
	}
	mt := scrapeMetrics(t, a.URL()+"/metrics")
	if got := mt[`vigia_rejected_connections_total{listener="webrtc_tcp",reason="per_address_limit"}`]; got < float64(attempts.Load())/2 {
		t.Errorf("%v connections counted as rejected of %d opened", got, attempts.Load())
	}
	waitSegments(t, st, "cam", len(segments(t, st, "cam"))+2, 30*time.Second)
	auditFrames(t, st, "cam", from, to)
}
