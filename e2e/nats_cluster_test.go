package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/catalogue"
	"github.com/vigia/vigia/cluster"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/fs"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// TestNATSClusterFaults is the control-plane fault suite: three nats-server
// processes in one JetStream cluster (routes, replicas 3), three recorder
// processes, 12 synthetic cameras created through an API node, storage
// shared on disk. Each recorder reaches every server through a relay of its
// own, so that the test can cut one recorder off. The faults, in turn:
//
//  1. the leader of each bucket and stream the cluster uses killed in turn
//     with SIGKILL (and started again);
//  2. a rolling restart of the three servers (SIGKILL, start);
//  3. all three hung with SIGSTOP for 20 s (60 s with VIGIA_LONG=1), then
//     SIGCONT;
//  4. one recorder cut from NATS for 20 s (60 s with VIGIA_LONG=1).
//
// Judged by the stored segments: after 1–3 no camera has a hole over 1 s;
// after 4 no hole either, the cameras of the cut recorder were recorded
// twice while it was cut off, the double recording ended within 2 s of the
// cut ending and was counted, and for two of them the catalogue reads one
// continuous chain across the cut, and so do the API's recordings
// operation, recorded playlist and timeline, and a video exported across it
// has every frame once (ffprobe: fps × duration frames, none doubled).
// No two segments of a camera overlap before the cut.
func TestNATSClusterFaults(t *testing.T) {
	t.Parallel()
	hang := 20 * time.Second
	leaders := []string{"KV_" + bus.BucketAssign, "KV_" + bus.BucketNodes, "KV_" + bus.BucketCameras, bus.StreamSegments}
	if os.Getenv("VIGIA_LONG") != "" {
		hang = 60 * time.Second
		leaders = append(leaders, "KV_"+bus.BucketSegmentEnds, "KV_"+bus.BucketCameraStatus, bus.StreamEvents, bus.StreamGaps)
	}
	const cameras, recorders = 12, 3
	nc := startNATSCluster(t)
	admin := nc.admin()

	var specs []synth.CameraSpec
	for i := 1; i <= cameras; i++ {
		specs = append(specs, synth.CameraSpec{Path: fmt.Sprintf("c%d", i), Codec: "h264"})
	}
	cams := startSynth(t, specs...)
	shared := t.TempDir()
	st, err := fs.New(shared, fs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	api := nc.startAPI(t, shared, cams, specs)
	var ids []string
	for _, s := range specs {
		ids = append(ids, api.ids[s.Path])
	}
	bin := buildVigia(t)
	var recs []*faultRecorder
	for i := range recorders {
		recs = append(recs, nc.startRecorder(t, bin, fmt.Sprintf("r%d", i+1), shared))
	}
	start := time.Now()
	testenv.WaitFor(t, 90*time.Second, "every camera recording", func() bool {
		for _, id := range ids {
			if !storedUntil(t, st, id, start.Add(4*time.Second)) {
				return false
			}
		}
		return true
	})
	judgeFrom := time.Now()

	// 1. The leader of each bucket and stream killed in turn.
	for _, name := range leaders {
		i := nc.leaderOf(admin, name)
		t.Logf("killing n%d, leader of %s", i+1, name)
		nc.kill(i)
		time.Sleep(3 * time.Second) // the server stays down this long
		nc.start(i)
		nc.waitReady(admin)
	}
	case1 := time.Now()

	// 2. A rolling restart of the three servers.
	for i := range nc.procs {
		t.Logf("restarting n%d", i+1)
		nc.kill(i)
		time.Sleep(2 * time.Second)
		nc.start(i)
		nc.waitReady(admin)
	}
	case2 := time.Now()

	// 3. All three servers hung (SIGSTOP), then let go on (SIGCONT).
	t.Logf("hanging every server for %v", hang)
	nc.signalAll(syscall.SIGSTOP)
	time.Sleep(hang)
	nc.signalAll(syscall.SIGCONT)
	nc.waitReady(admin)
	case3 := time.Now()

	// 4. One recorder cut from NATS while the others run: the one holding
	// the most cameras.
	held := map[string]int{}
	for _, id := range ids {
		if e, err := admin.Bucket(bus.BucketAssign).Get(context.Background(), id); err == nil {
			held[cluster.LeaseNode(e.Value)]++
		}
	}
	cut := recs[0]
	for _, r := range recs {
		if held[r.id] > held[cut.id] {
			cut = r
		}
	}
	t.Logf("cutting %s, holding %d cameras, from NATS for %v", cut.id, held[cut.id], hang)
	cutStart := time.Now()
	cut.set(relayCut)
	time.Sleep(hang)
	cut.set(relayOpen)
	cutEnd := time.Now()
	end := cutEnd.Add(8 * time.Second)
	testenv.WaitFor(t, 90*time.Second, "segments stored past the last fault", func() bool {
		for _, id := range ids {
			if !storedUntil(t, st, id, end) {
				return false
			}
		}
		return true
	})

	windows := []struct {
		name     string
		from, to time.Time
	}{
		{"leaders killed", judgeFrom, case1},
		{"rolling restart", case1, case2},
		{"all servers hung", case2, case3},
		{"one recorder cut off", case3, end},
	}
	doubled := 0
	var lastDoubleEnd int64
	var audited int
	for _, id := range ids {
		before := doubled
		segs := segments(t, st, id)
		for _, w := range windows {
			if h, at := maxHole(segs, w.from, w.to); h > time.Second {
				t.Errorf("camera %s, %s: hole of %v at %s", id, w.name, h, at.Format("15:04:05.000"))
			}
		}
		// Overlapping segments: two nodes recorded the camera.
		for i := range segs {
			for j := i + 1; j < len(segs) && segs[j].StartMs < segs[i].EndMs(); j++ {
				if segs[j].StartMs < cutStart.UnixMilli() {
					t.Errorf("camera %s: %s and %s overlap before the cut", id, segs[i].Key, segs[j].Key)
					for _, r := range recs {
						r.logAbout(t, id)
					}
					continue
				}
				doubled++
				lastDoubleEnd = max(lastDoubleEnd, min(segs[i].EndMs(), segs[j].EndMs()))
			}
		}
		// Readers take one continuous chain.
		cat := catalogue.New(catalogue.Config{Store: st, MaxSegment: time.Minute})
		chain, err := cat.Segments(context.Background(), id, cutStart.Add(-5*time.Second), end)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < len(chain); i++ {
			if d := chain[i].StartMs - chain[i-1].EndMs(); d <= -nodesSkewMs || d > 1000 {
				t.Errorf("camera %s: the catalogue's chain goes from %s to %s (%d ms)", id, chain[i-1].Key, chain[i].Key, d)
			}
		}
		if doubled > before && audited < 2 {
			// A camera recorded twice: what readers get across the cut
			// is every frame once (ffprobe on each segment of the chain:
			// no frame missing inside one, none between two, no overlap),
			// and so through the API's operations.
			audited++
			var segs []stored
			for _, c := range chain {
				segs = append(segs, stored{Key: c.Key, StartMs: c.StartMs, DurMs: c.DurMs, Size: c.Size})
			}
			want := wantSegments{Codec: "h264", Width: 1280, Height: 720, FrameInterval: frameInterval}
			for _, s := range segs {
				auditRecording(t, st, []stored{s}, want)
			}
			for i := 1; i < len(segs); i++ {
				if d := segs[i].StartMs - segs[i-1].EndMs(); d <= -nodesSkewMs || time.Duration(d)*time.Millisecond > frameInterval {
					t.Errorf("camera %s: %s follows %s in the chain (%d ms)", id, segs[i].Key, segs[i-1].Key, d)
				}
			}
			api.readsOneRecording(t, id, cutStart.Add(-5*time.Second), cutEnd.Add(5*time.Second))
		}
	}
	if doubled == 0 {
		t.Errorf("no camera recorded twice while %s was cut off: the others did not take its cameras", cut.id)
	} else {
		after := time.UnixMilli(lastDoubleEnd).Sub(cutEnd)
		t.Logf("double recording ended %v after the cut ended (%d overlapping pairs)", after, doubled)
		if after > 2*time.Second {
			t.Errorf("double recording ended %v after the cut ended, want within 2 s", after)
		}
	}
	m := scrapeMetrics(t, cut.url+"/metrics")
	t.Logf("%s: vigia_duplicate_recording_seconds_total %v", cut.id, m["vigia_duplicate_recording_seconds_total"])
	if m["vigia_duplicate_recording_seconds_total"] <= 0 {
		t.Errorf("%s counted no double recording", cut.id)
	}
}

// storedUntil reports whether cam has a stored segment ending after t.
func storedUntil(t *testing.T, st storage.Store, cam string, at time.Time) bool {
	for _, s := range segments(t, st, cam) {
		if s.EndMs() > at.UnixMilli() {
			return true
		}
	}
	return false
}

// maxHole returns the longest time in [from, to) that no segment covers,
// and where it begins.
func maxHole(segs []stored, from, to time.Time) (time.Duration, time.Time) {
	sort.Slice(segs, func(i, j int) bool { return segs[i].StartMs < segs[j].StartMs })
	covered := from.UnixMilli()
	var worst, at int64
	for _, s := range segs {
		if s.EndMs() <= covered {
			continue
		}
		if s.StartMs >= to.UnixMilli() {
			break
		}
		if gap := s.StartMs - covered; gap > worst {
			worst, at = gap, covered
		}
		covered = s.EndMs()
	}
	if gap := to.UnixMilli() - covered; gap > worst {
		worst, at = gap, covered
	}
	return time.Duration(worst) * time.Millisecond, time.UnixMilli(at)
}

// natsCluster is three nats-server processes in one JetStream cluster, on
// fixed ports so that each starts again where it was. Processes, not
// servers inside the test, so that a server can be killed with SIGKILL and
// hung with SIGSTOP as an operator's would be.
type natsCluster struct {
	t     *testing.T
	bin   string
	names [3]string
	ports [3]int
	args  [3][]string
	mu    sync.Mutex
	procs [3]*exec.Cmd
	outs  [3]*lockedBuffer
}

var (
	natsServerOnce sync.Once
	natsServerBin  string
	natsServerErr  error
)

// natsServerBinary builds the nats-server of go.mod once per test process
// (from the module cache, as the recorders' client library is) and returns
// its path.
func natsServerBinary(t *testing.T) string {
	t.Helper()
	natsServerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "nats-server-bin")
		if err != nil {
			natsServerErr = err
			return
		}
		natsServerBin = filepath.Join(dir, "nats-server")
		out, err := exec.Command("go", "build", "-o", natsServerBin, "github.com/nats-io/nats-server/v2").CombinedOutput()
		if err != nil {
			natsServerErr = fmt.Errorf("go build nats-server: %v: %s", err, out)
		}
	})
	if natsServerErr != nil {
		t.Fatal(natsServerErr)
	}
	return natsServerBin
}

func startNATSCluster(t *testing.T) *natsCluster {
	c := &natsCluster{t: t, bin: natsServerBinary(t)}
	var routes []string
	cports := [3]int{}
	for i := range cports {
		cports[i] = testenv.FreePort(t)
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", cports[i]))
	}
	for i := range c.args {
		c.names[i] = fmt.Sprintf("n%d", i+1)
		c.ports[i] = testenv.FreePort(t)
		c.args[i] = []string{"--server_name", c.names[i], "-a", "127.0.0.1", "-p", strconv.Itoa(c.ports[i]),
			"-js", "-sd", t.TempDir(), "--cluster_name", "vigia",
			"--cluster", fmt.Sprintf("nats://127.0.0.1:%d", cports[i]), "--routes", strings.Join(routes, ","),
			// Clients learn no server addresses: each recorder
			// reaches the servers through its relays only.
			"--no_advertise=true"}
	}
	t.Cleanup(func() {
		for i := range c.procs {
			c.kill(i)
		}
		if t.Failed() {
			for i, o := range c.outs {
				if o != nil {
					tail := o.String()
					if len(tail) > 3000 {
						tail = tail[len(tail)-3000:]
					}
					t.Logf("nats-server n%d output (tail):\n%s", i+1, tail)
				}
			}
		}
	})
	for i := range c.args {
		c.start(i)
	}
	return c
}

// start starts server i and waits until it takes connections.
func (c *natsCluster) start(i int) {
	cmd := exec.Command(c.bin, c.args[i]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	c.procs[i], c.outs[i] = cmd, out
	c.mu.Unlock()
	testenv.WaitFor(c.t, 20*time.Second, "nats-server "+c.names[i]+" taking connections", func() bool {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", c.ports[i]), time.Second)
		if err != nil {
			return false
		}
		_ = conn.Close()
		return true
	})
}

// kill kills server i with SIGKILL.
func (c *natsCluster) kill(i int) {
	c.mu.Lock()
	cmd := c.procs[i]
	c.procs[i] = nil
	c.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}

// signalAll sends sig to every server.
func (c *natsCluster) signalAll(sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, cmd := range c.procs {
		if cmd == nil {
			c.t.Fatalf("nats-server n%d not running", i+1)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			c.t.Fatal(err)
		}
	}
}

func (c *natsCluster) url(i int) string { return fmt.Sprintf("nats://127.0.0.1:%d", c.ports[i]) }

// admin connects the test to the cluster and creates the streams and
// buckets with 3 replicas.
func (c *natsCluster) admin() *bus.Bus {
	urls := []string{c.url(0), c.url(1), c.url(2)}
	var b *bus.Bus
	testenv.WaitFor(c.t, 60*time.Second, "the JetStream cluster up with replicas 3", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		b, err = bus.Open(ctx, bus.Options{URL: strings.Join(urls, ","), Replicas: 3, Name: "fault-suite"}, zap.NewNop())
		return err == nil
	})
	c.t.Cleanup(b.Close)
	return b
}

// leaderOf returns the index of the server leading stream name.
func (c *natsCluster) leaderOf(b *bus.Bus, name string) int {
	var leader string
	testenv.WaitFor(c.t, 30*time.Second, "a leader of "+name, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := b.JetStream().Stream(ctx, name)
		if err != nil {
			return false
		}
		info, err := s.Info(ctx)
		if err != nil || info.Cluster == nil {
			return false
		}
		leader = info.Cluster.Leader
		if info.Config.Replicas != 3 {
			c.t.Fatalf("%s has %d replicas, want 3", name, info.Config.Replicas)
		}
		return leader != ""
	})
	for i, name := range c.names {
		if name == leader {
			return i
		}
	}
	c.t.Fatalf("leader %q of %s is none of the servers", leader, name)
	return -1
}

// waitReady waits until every stream and bucket the recorders use has a
// leader again.
func (c *natsCluster) waitReady(b *bus.Bus) {
	for _, name := range []string{"KV_" + bus.BucketAssign, "KV_" + bus.BucketNodes, "KV_" + bus.BucketCameras, bus.StreamSegments} {
		c.leaderOf(b, name)
	}
}

// faultRecorder is a recorder process and its relays to the servers.
type faultRecorder struct {
	id     string
	url    string // its HTTP base URL
	relays []*tcpGate
	out    *lockedBuffer
}

// logAbout logs the recorder's log lines about camera id and its own
// control-plane events.
func (r *faultRecorder) logAbout(t *testing.T, id string) {
	var lines []string
	for _, l := range strings.Split(r.out.String(), "\n") {
		if strings.Contains(l, `"camera":"`+id+`"`) || strings.Contains(l, "heartbeat") || strings.Contains(l, "nats") {
			lines = append(lines, l)
		}
	}
	t.Logf("recorder %s about %s:\n%s", r.id, id, strings.Join(lines, "\n"))
}

func (r *faultRecorder) set(state relayState) {
	for _, rl := range r.relays {
		rl.set(state)
	}
}

func (c *natsCluster) startRecorder(t *testing.T, bin, id, shared string) *faultRecorder {
	fr := &faultRecorder{id: id}
	var urls []string
	for i := range c.ports {
		rl := startTCPGate(t, fmt.Sprintf("127.0.0.1:%d", c.ports[i]))
		fr.relays = append(fr.relays, rl)
		urls = append(urls, "nats://"+rl.addr())
	}
	dir := filepath.Join(t.TempDir(), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	port := testenv.FreePort(t)
	fr.url = fmt.Sprintf("http://127.0.0.1:%d", port)
	yaml := fmt.Sprintf(`node_id: %s
data_dir: %s
http: {addr: "127.0.0.1:%d", metrics_token: %q}
nats: {url: %q, replicas: 3}
security: {secret: %q}
storage: {backend: fs, path: %q}
ingest: {backoff_max: 2s, allow_private_networks: true}
rtmp: {addr: "127.0.0.1:0"}
recording: {segment_duration: 2s}
`, id, dir, port, e2eMetricsToken, strings.Join(urls, ","), clusterSecret, shared)
	f := filepath.Join(dir, "vigia.yaml")
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "recorder", "--config", f)
	out := &lockedBuffer{}
	fr.out = out
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			s := out.String()
			if len(s) > 6000 {
				s = s[len(s)-6000:]
			}
			t.Logf("recorder %s output (tail):\n%s", id, s)
		}
	})
	return fr
}

// relayState is what a relay does with its connections.
type relayState int

const (
	relayOpen relayState = iota // forwards
	relayCut                    // closes every connection and refuses new ones
)

// tcpGate forwards TCP connections to one NATS server.
type tcpGate struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	state relayState
	conns map[net.Conn]bool
}

func startTCPGate(t *testing.T, target string) *tcpGate {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &tcpGate{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() {
		_ = ln.Close()
		r.set(relayCut)
	})
	go r.accept()
	return r
}

func (r *tcpGate) addr() string { return r.ln.Addr().String() }

func (r *tcpGate) set(s relayState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s == r.state {
		return
	}
	if s == relayCut {
		for c := range r.conns {
			_ = c.Close()
		}
	}
	r.state = s
}

// open reports whether the relay forwards.
func (r *tcpGate) open() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state == relayOpen
}

func (r *tcpGate) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == relayCut {
		_ = c.Close()
		return false
	}
	r.conns[c] = true
	return true
}

func (r *tcpGate) forget(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	_ = c.Close()
}

func (r *tcpGate) accept() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		if !r.track(c) {
			continue
		}
		go func() {
			up, err := net.DialTimeout("tcp", r.target, 2*time.Second)
			if err != nil || !r.track(up) {
				if up != nil {
					r.forget(up)
				}
				r.forget(c)
				return
			}
			done := make(chan struct{}, 2)
			go func() { r.pipe(up, c); done <- struct{}{} }()
			go func() { r.pipe(c, up); done <- struct{}{} }()
			<-done
			r.forget(c)
			r.forget(up)
			<-done
		}()
	}
}

// pipe copies src to dst while the relay is open.
func (r *tcpGate) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !r.open() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // closed, or EOF: the caller closes both ends
		}
	}
}

// faultAPI is a node serving the API (as `vigia api`) on the cluster, with
// the recorders' storage. The suite's cameras are created through it, and
// what readers get across the cut is read back through its operations.
type faultAPI struct {
	apiClient
	op     string            // the operator token, as a query
	ids    map[string]string // synthetic camera path → camera id
	digest map[string]string // camera id → digest
	player map[string]string // camera id → player_digest
}

// startAPI starts the API node on the servers (not through the relays: it
// is no party to the faults) and creates a client and one camera per spec.
func (c *natsCluster) startAPI(t *testing.T, shared string, cams *synth.Server, specs []synth.CameraSpec) *faultAPI {
	log, _ := testLogger(t)
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.NodeID = "api"
	cfg.HTTP.Addr = "127.0.0.1:0"
	cfg.NATS.URL = strings.Join([]string{c.url(0), c.url(1), c.url(2)}, ",")
	cfg.NATS.Listen = ""
	cfg.NATS.Replicas = 3
	cfg.RTMP.Addr = "127.0.0.1:0"
	cfg.OperatorToken = apiOperator
	cfg.Security.Secret = clusterSecret
	cfg.Ingest.AllowPrivateNetworks = true
	cfg.Storage.Backend, cfg.Storage.Path = "fs", shared
	if err := cfg.Resolve(); err != nil {
		t.Fatal(err)
	}
	cfg.HTTP.PublicURL = ""
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a := startMode(t, cfg, app.Mode{Name: "test", API: true}, log)
	api := &faultAPI{apiClient: apiClient{t: t, base: a.URL()}, op: "?token=" + apiOperator,
		ids: map[string]string{}, digest: map[string]string{}, player: map[string]string{}}
	v := api.call("POST", "/api/v1/clients"+api.op, map[string]any{"name": "Faults", "document_type": 2, "document_number": "11.222.333/0001-81",
		"phone": "11 5555-0000", "cep": "01000-000", "address": "Rua A", "address_number": "10", "address_comp": "",
		"address_nh": "Centro", "city": "São Paulo", "state": "SP",
		"users": []any{map[string]any{"name": "Ana", "email": "ana@faults.com", "phone": "11", "user_type": 2, "password": "password1", "password_conf": "password1"}}}, 201)
	client := one(t, "create client", v).(map[string]any)
	for _, s := range specs {
		created := one(t, "create camera", api.call("POST", "/api/v1/cameras"+api.op, map[string]any{"description": s.Path,
			"camera_address": "Rua A, 10", "latitude": "-23.55", "longitude": "-46.63", "connection_type": 0, "resolution_id": 1,
			"history_days": 1, "client_id": client["id"], "model_id": 3, "stream": "0", "typed_url": cams.URL(s.Path)}, 201)).(map[string]any)
		id := strconv.Itoa(int(created["id"].(float64)))
		got := api.call("GET", "/api/camera-player/"+id+api.op, nil, 200).(map[string]any)
		api.ids[s.Path], api.digest[id], api.player[id] = id, got["digest"].(string), got["player_digest"].(string)
	}
	return api
}

// nodesSkewMs bounds how far the segments of two nodes that recorded one
// camera may overlap where a reader's chain passes from one to the other.
// Each node stamps the camera's frames on its own clock from the first
// frame it received, and cuts segments at the same keyframes (a segment is
// a GOP here), so their boundaries differ by the difference of those
// arrivals, a few milliseconds: less than half a frame interval, no frame
// is shown twice.
const nodesSkewMs = int64(frameInterval / time.Millisecond / 2)

// readsOneRecording checks that the recordings operation, the recorded
// playlist, the timeline and a video exported through the API each show
// camera id recorded once and without a break over [from, to).
func (api *faultAPI) readsOneRecording(t *testing.T, id string, from, to time.Time) {
	t.Helper()
	fromMs, toMs := from.UnixMilli(), to.UnixMilli()
	span := func(a, b int64) string {
		return time.UnixMilli(a).Format("15:04:05.000") + "–" + time.UnixMilli(b).Format("15:04:05.000")
	}
	// chained checks spans (start, end) in order: each begins where the
	// last ended (at most a frame interval later, less than half of one
	// earlier: nodesSkewMs), and together they cover [fromMs, toMs).
	chained := func(what string, spans [][2]int64) {
		t.Helper()
		if len(spans) == 0 {
			t.Errorf("%s of %s: nothing over %s", what, id, span(fromMs, toMs))
			return
		}
		if spans[0][0] > fromMs || spans[len(spans)-1][1] < toMs {
			t.Errorf("%s of %s covers %s, want %s", what, id, span(spans[0][0], spans[len(spans)-1][1]), span(fromMs, toMs))
		}
		for i := 1; i < len(spans); i++ {
			if d := spans[i][0] - spans[i-1][1]; d <= -nodesSkewMs || time.Duration(d)*time.Millisecond > frameInterval {
				t.Errorf("%s of %s: %s follows %s (%d ms)", what, id, span(spans[i][0], spans[i][1]), span(spans[i-1][0], spans[i-1][1]), d)
			}
		}
	}

	// The recordings operation.
	rv := api.call("GET", "/camera/"+id+"/recordings"+api.op+"&id="+id+"&digest="+api.digest[id]+
		"&timeStamp="+strconv.FormatInt(fromMs-10_000, 10), nil, 200).(map[string]any)
	var spans [][2]int64
	for _, r := range rv["DATA"].([]any) {
		m := r.(map[string]any)
		ini, _ := strconv.ParseInt(m["ini"].(string), 10, 64)
		dur, _ := strconv.ParseInt(m["dur"].(string), 10, 64)
		if ini+dur > fromMs && ini < toMs {
			spans = append(spans, [2]int64{ini, ini + dur})
		}
	}
	chained("the recordings operation", spans)

	// The recorded playlist: the segments it names, by their file names.
	pq := "?player_digest=" + api.player[id] + "&from=" + strconv.FormatInt(fromMs, 10) + "&to=" + strconv.FormatInt(toMs, 10)
	pl := api.call("GET", "/api/camera/"+id+"/vod.m3u8"+pq, nil, 200).(string)
	spans = nil
	for _, line := range strings.Split(pl, "\n") {
		if strings.HasPrefix(line, "#") || !strings.Contains(line, "/segment/") {
			continue
		}
		name := path.Base(strings.SplitN(line, "?", 2)[0])
		var start, dur, init int64
		if _, err := fmt.Sscanf(strings.TrimSuffix(name, ".mp4"), "%d_%d_%d", &start, &dur, &init); err != nil {
			t.Fatalf("playlist of %s: segment %q: %v", id, name, err)
		}
		spans = append(spans, [2]int64{start, start + dur})
	}
	chained("the recorded playlist", spans)

	// The timeline: one recorded span, no gap.
	tl := api.call("GET", "/api/camera/"+id+"/player/timeline"+pq, nil, 200).(map[string]any)
	spans = nil
	for _, r := range tl["recorded"].([]any) {
		m := r.(map[string]any)
		spans = append(spans, [2]int64{int64(m["start_ms"].(float64)), int64(m["end_ms"].(float64))})
	}
	chained("the timeline", spans)
	for _, g := range tl["gaps"].([]any) {
		m := g.(map[string]any)
		if d := time.Duration(m["end_ms"].(float64)-m["start_ms"].(float64)) * time.Millisecond; d > frameInterval {
			t.Errorf("timeline of %s: a gap of %v (%v)", id, d, m["cause"])
		}
	}

	// A video exported across the range: every frame once.
	dv := api.call("POST", "/v2/api/drives"+api.op+"&camera_id="+id+"&start_at="+strconv.FormatInt(fromMs, 10)+
		"&end_at="+strconv.FormatInt(toMs, 10)+"&description=across", nil, 200).(map[string]any)
	vid := strconv.Itoa(int(dv["data"].(map[string]any)["id"].(float64)))
	var video map[string]any
	testenv.WaitFor(t, 90*time.Second, "video "+vid+" of camera "+id+" ready", func() bool {
		lv := api.call("GET", "/v2/api/drives"+api.op+"&ids="+vid, nil, 200).(map[string]any)
		video = one(t, "videos", lv["data"]).(map[string]any)
		if video["status"] == float64(2) {
			t.Fatalf("video of %s failed: %v", id, video["error"])
		}
		return video["status"] == float64(1)
	})
	res, err := http.Get(video["url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("video of %s: %v, %d", id, err, res.StatusCode)
	}
	clip := filepath.Join(t.TempDir(), vid+".mp4")
	if err := os.WriteFile(clip, b, 0o644); err != nil {
		t.Fatal(err)
	}
	// The clip starts at the keyframe at or before fromMs (GOP 2 s) and
	// ends at toMs; every frame in it once: one frame interval apart.
	pts := framePTS(t, clip)
	if len(pts) < 2 {
		t.Fatalf("video of %s: %d frames", id, len(pts))
	}
	length := pts[len(pts)-1] - pts[0] + frameInterval
	want := time.Duration(toMs-fromMs) * time.Millisecond
	t.Logf("video of %s over %s: %d frames over %v", id, span(fromMs, toMs), len(pts), length)
	if length < want-frameInterval || length > want+2*time.Second+frameInterval {
		t.Errorf("video of %s over %s lasts %v, want %v to %v more", id, span(fromMs, toMs), length, want, want+2*time.Second)
	}
	if n := int(length / frameInterval); len(pts) < n-1 || len(pts) > n+1 {
		t.Errorf("video of %s: %d frames over %v, want %d (fps × duration)", id, len(pts), length, n)
	}
	for i := 1; i < len(pts); i++ {
		if d := pts[i] - pts[i-1]; d < frameInterval/2 || d > frameInterval*3/2 {
			t.Errorf("video of %s: a frame at %v follows one at %v: a frame doubled or missing", id, pts[i], pts[i-1])
			break
		}
	}
}

// framePTS returns the presentation times of a file's video frames, in
// presentation order.
func framePTS(t *testing.T, file string) []time.Duration {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time",
		"-of", "csv=p=0", file).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", file, err)
	}
	var pts []time.Duration
	for _, l := range strings.Fields(string(out)) {
		f, err := strconv.ParseFloat(strings.TrimSuffix(l, ","), 64)
		if err != nil {
			continue
		}
		pts = append(pts, time.Duration(f*float64(time.Second)))
	}
	slices.Sort(pts)
	return pts
}
