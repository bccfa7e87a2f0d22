package e2e

import (
	"context"
	"net"
	"net/http"
	"os"
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// processFDs returns the descriptors this process (the node's) holds.
func processFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return len(ents)
}

// TestICETCPFlood: 4,200 idle connections opened from one address as fast as
// eight clients can, and more for 10 s, to the ICE-TCP listener of a node
// recording a camera. The node holds at most
// webrtc.tcp_max_connections_per_address of them (its descriptors stay
// bounded), closes the others at once and counts them, keeps answering
// /healthz, and the camera's recording covers the flood.
func TestICETCPFlood(t *testing.T) {
	t.Parallel()
	m := testenv.MinIO(t)
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

	base := processFDs(t)
	var open, attempts atomic.Int64 // the flood's own sockets, its dials
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
				open.Add(1)
				attempts.Add(1)
				wg.Add(1)
				go func() { // held until the node closes it
					defer wg.Done()
					stopRead := context.AfterFunc(ctx, func() { nc.Close() })
					_, _ = nc.Read(make([]byte, 1))
					stopRead()
					nc.Close()
					open.Add(-1)
				}()
			}
		}()
	}
	peak, healthy, probes := 0, 0, 0
	hc := &http.Client{Timeout: 2 * time.Second}
	for ctx.Err() == nil {
		peak = max(peak, processFDs(t)-int(open.Load())-base)
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
	t.Logf("%d connections opened in %v; the node's descriptors rose by at most %d; /healthz answered %d of %d",
		attempts.Load(), to.Sub(from).Round(time.Millisecond), peak, healthy, probes)
	perAddr := c.WebRTC.TCPMaxConnectionsPerAddress
	if attempts.Load() < int64(4*perAddr) {
		t.Fatalf("only %d connections opened", attempts.Load())
	}
	// Besides the connections held: the HTTP probes', the camera's, the
	// uploads', and the flood's sockets closing as they are counted.
	if peak > perAddr+256 {
		t.Errorf("the node's descriptors rose by %d under the flood", peak)
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
