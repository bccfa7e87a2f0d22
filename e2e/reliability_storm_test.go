package e2e

import (
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/ingest"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// tcpProxy forwards connections to a target that can be switched, counts
// the connections it accepts (each one is a camera connection attempt) and
// can cut every open connection at once.
type tcpProxy struct {
	ln net.Listener

	mu       sync.Mutex
	target   string
	conns    map[net.Conn]bool
	accepted []time.Time
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	go p.serve()
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	return p
}

func (p *tcpProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.accepted = append(p.accepted, time.Now())
		target := p.target
		p.mu.Unlock()
		go p.forward(c, target)
	}
}

func (p *tcpProxy) forward(c net.Conn, target string) {
	u, err := net.Dial("tcp", target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[u] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(u, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, u); done <- struct{}{} }()
	<-done
	c.Close()
	u.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, u)
	p.mu.Unlock()
}

// cut closes every open connection.
func (p *tcpProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *tcpProxy) setTarget(t string) {
	p.mu.Lock()
	p.target = t
	p.mu.Unlock()
}

func (p *tcpProxy) acceptedSince(t time.Time) []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Time
	for _, a := range p.accepted {
		if !a.Before(t) {
			out = append(out, a)
		}
	}
	return out
}

// TestReconnectStorm: every camera of a node loses its connection at the
// same moment, and when they come back a third of them answer 401 (their
// password was changed). Connection attempts stay within
// ingest.connect_rate (counted where the cameras are), the reconnected
// cameras are ONLINE and record again, the others settle at ERRO
// PERMANENTE and are not retried in a loop. 30 cameras; 200 with
// VIGIA_LONG=1.
func TestReconnectStorm(t *testing.T) {
	t.Parallel()
	n := 30
	if os.Getenv("VIGIA_LONG") == "1" {
		n = 200
	}
	const rate = 20
	const inFlight = time.Second
	m := testenv.SharedMinIO(t)
	var open, locked []synth.CameraSpec
	for i := 1; i <= n; i++ {
		open = append(open, synth.CameraSpec{Path: fmt.Sprintf("c%d", i), Codec: "h264", Small: true})
		if i > n*2/3 {
			locked = append(locked, synth.CameraSpec{Path: fmt.Sprintf("c%d", i), Codec: "h264", Small: true, User: "admin", Pass: "changed-pass"})
		}
	}
	srvA := startSynth(t, open...)
	srvB := startSynth(t, locked...)
	stay := newTCPProxy(t, srvA.Addr())
	change := newTCPProxy(t, srvA.Addr())

	c := s3Config(t, m)
	c.Motion.Enabled = false
	c.Ingest.ConnectRate = rate
	c.Ingest.BackoffMax = config.Duration(4 * time.Second)
	c.Recording.UploadConcurrency = 8
	if n > 30 {
		// 200 cameras cutting 2 s segments are 100 uploads a second, more
		// than MinIO stores on a loaded 2-core machine: the spool fills and
		// drops its oldest segments, as designed, and the audit below sees
		// those gaps. 6 s segments keep storage out of this test.
		c.Recording.SegmentDuration = config.Duration(6 * time.Second)
	}
	log, _ := testLogger(t)
	a := startAppMode(t, c, app.Mode{Name: "test", Recorder: true}, log)
	proxyOf := func(i int) *tcpProxy {
		if i > n*2/3 {
			return change
		}
		return stay
	}
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("c%d", i)
		url := "rtsp://" + proxyOf(i).ln.Addr().String() + "/" + id
		if err := a.RecordCamera(ingest.Camera{ID: id, URL: url, Trusted: true}); err != nil {
			t.Fatal(err)
		}
	}
	st := openS3(t, c)
	testenv.WaitFor(t, time.Duration(n)*time.Second, "every camera recording", func() bool {
		for i := 1; i <= n; i++ {
			if s, _ := a.Recorder().Status(fmt.Sprintf("c%d", i)); s.Code != status.Online {
				return false
			}
		}
		return true
	})
	time.Sleep(3 * time.Second)

	// All at once: connections cut; a third now ask for a password.
	change.setTarget(srvB.Addr())
	dropAt := time.Now()
	stay.cut()
	change.cut()
	settle := time.Duration(n/rate+20) * time.Second
	testenv.WaitFor(t, settle+30*time.Second, "statuses settled", func() bool {
		for i := 1; i <= n; i++ {
			s, _ := a.Recorder().Status(fmt.Sprintf("c%d", i))
			want := status.Online
			if i > n*2/3 {
				want = status.Permanent
			}
			if s.Code != want {
				return false
			}
		}
		return true
	})
	settled := time.Now()
	time.Sleep(3 * time.Second)

	// Attempts within the rate: in any window, at most burst + rate × window.
	var attempts []time.Time
	attempts = append(attempts, stay.acceptedSince(dropAt)...)
	attempts = append(attempts, change.acceptedSince(dropAt)...)
	sort.Slice(attempts, func(i, j int) bool { return attempts[i].Before(attempts[j]) })
	for i := range attempts {
		for j := i; j < len(attempts); j++ {
			win := attempts[j].Sub(attempts[i])
			if allowed := rate + int(rate*win.Seconds()) + 1; j-i+1 > allowed {
				t.Fatalf("%d connection attempts within %v, above connect_rate %d/s (burst %d)", j-i+1, win, rate, rate)
			}
		}
	}
	// The 401 cameras are not retried in a loop: one attempt each, plus at
	// most one in flight at the drop.
	if got := len(change.acceptedSince(settled)); got != 0 {
		t.Errorf("%d attempts on the 401 cameras after they settled, want none (retry after %v)", got, c.Ingest.PermanentRetry)
	}
	t.Logf("%d cameras dropped at once: %d attempts, settled in %v", n, len(attempts), settled.Sub(dropAt).Round(time.Millisecond))

	// Storage: the reconnected cameras record again; their only gap is the
	// reconnection, within the rate-limited storm.
	for i := 1; i <= n*2/3; i++ {
		id := fmt.Sprintf("c%d", i)
		testenv.WaitFor(t, 60*time.Second, id+" recording after the storm", func() bool {
			for _, s := range segments(t, st, id) {
				if s.StartMs > settled.UnixMilli() {
					return true
				}
			}
			return false
		})
		segs := segments(t, st, id)
		// The outage starts with what was on its way when the proxy cut the
		// connections (frames between the cameras and the recorder, up to
		// inFlight on a loaded machine) and ends within a GOP of the
		// statuses settling.
		auditContinuity(t, segs, frameInterval, [2]int64{dropAt.Add(-inFlight).UnixMilli(), settled.Add(4 * time.Second).UnixMilli()})
		if i%10 == 1 {
			// ffprobe reads the segments around the storm, not the whole
			// recording: with 200 cameras that would take longer than the
			// storm itself.
			var around []stored
			for _, sg := range segs {
				if sg.EndMs() >= dropAt.Add(-10*time.Second).UnixMilli() && sg.StartMs <= settled.Add(20*time.Second).UnixMilli() {
					around = append(around, sg)
				}
			}
			auditSegments(t, st, around, "h264")
		}
	}
}
