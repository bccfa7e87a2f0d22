package deploy

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/cluster"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/storage/s3"
	"github.com/vigia/vigia/testenv"
)

// clusterCameras is the fleet of make cluster.
const clusterCameras = 20

// handoverBound is the longest gap accepted at a drained camera's handover:
// the drain (segments finished and uploaded, leases released), the next
// reconcile tick of another node, the connection and the first keyframe
// (GOP 2 s), on a shared 2-core machine.
const handoverBound = 15 * time.Second

// TestMakeCluster runs deploy/cluster/run.sh (make cluster): MinIO, NATS,
// the API, three recorders and 20 synthetic cameras as processes. All 20
// cameras are ONLINE through the API and recording; one recorder is
// drained with SIGTERM and its cameras continue on the others, its last
// segments uploaded, with no overlap and no gap beyond the handover; the
// API shows all 20 ONLINE again; Ctrl-C (SIGINT) stops everything.
func TestMakeCluster(t *testing.T) {
	c := startCluster(t)
	c.wantReplicas(t, 3)

	start := time.Now()
	testenv.WaitFor(t, 120*time.Second, "20 cameras ONLINE through the API", func() bool {
		return c.onlineThroughAPI(t) == clusterCameras
	})
	t.Logf("20 cameras ONLINE through the API %v after the cluster was ready", time.Since(start).Round(100*time.Millisecond))
	testenv.WaitFor(t, 90*time.Second, "every camera recording (a segment stored after start)", func() bool {
		for i := 1; i <= clusterCameras; i++ {
			if !c.hasSegmentAfter(t, strconv.Itoa(i), start) {
				return false
			}
		}
		return true
	})
	// Let the assignment settle (nodes joined one after another) and
	// record a few segments on the final owners.
	time.Sleep(4 * time.Second)
	settled := time.Now()

	leases := c.leases(t)
	if len(leases) != clusterCameras {
		t.Fatalf("%d leases, want %d: %v", len(leases), clusterCameras, leases)
	}
	split := map[string][]string{}
	for cam, node := range leases {
		split[node] = append(split[node], cam)
	}
	victim := ""
	for node, cams := range split {
		if victim == "" || len(cams) > len(split[victim]) || (len(cams) == len(split[victim]) && node < victim) {
			victim = node
		}
	}
	moved := split[victim]
	sort.Strings(moved)
	t.Logf("leases by node: %v; draining %s with %d cameras", split, victim, len(moved))
	if len(split) != 3 {
		t.Errorf("cameras on %d nodes, want 3: %v", len(split), split)
	}

	pid := c.pid(t, victim)
	termAt := time.Now()
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testenv.WaitFor(t, 45*time.Second, victim+" to exit after SIGTERM", func() bool { return !alive(pid) })
	drained := time.Since(termAt)
	t.Logf("%s drained and exited %v after SIGTERM", victim, drained.Round(10*time.Millisecond))
	if left := spooled(t, filepath.Join(c.dir, victim, "spool")); len(left) > 0 {
		t.Errorf("drained node left segments in its spool: %v", left)
	}
	logText, _ := os.ReadFile(filepath.Join(c.dir, "logs", victim+".log"))
	if strings.Contains(string(logText), "segments left in the spool") {
		t.Errorf("drained node says it left segments in the spool")
	}

	var worst time.Duration
	testenv.WaitFor(t, 60*time.Second, "the drained node's cameras recording on the other nodes", func() bool {
		l := c.leases(t)
		for _, cam := range moved {
			if n := l[cam]; n == "" || n == victim {
				return false
			}
			if !c.hasSegmentAfter(t, cam, termAt) {
				return false
			}
		}
		return true
	})
	testenv.WaitFor(t, 60*time.Second, "20 cameras ONLINE through the API after the drain", func() bool {
		return c.onlineThroughAPI(t) == clusterCameras
	})

	// The metrics operators use are on /metrics of the running nodes, and
	// the two remaining recorders count the 20 cameras ONLINE.
	var recURLs []string
	for _, u := range strings.Fields(c.env["RECORDER_URLS"]) {
		if !strings.HasSuffix(u, fmt.Sprintf(":%d", c.port(t, victim))) {
			recURLs = append(recURLs, u)
		}
	}
	testenv.WaitFor(t, 30*time.Second, "vigia_cameras{status=ONLINE} of the remaining recorders to sum to 20", func() bool {
		sum := 0.0
		for _, u := range recURLs {
			sum += scrapeMetrics(t, u+"/metrics?token="+c.env["OPERATOR_TOKEN"]).value(`vigia_cameras{status="ONLINE"}`)
		}
		return sum == clusterCameras
	})
	for _, u := range recURLs {
		s := scrapeMetrics(t, u+"/metrics?token="+c.env["OPERATOR_TOKEN"])
		s.check(t, u, recorderMetrics)
		if s.value("vigia_segments_stored_total") == 0 || s.value("vigia_received_frames_total") == 0 {
			t.Errorf("%s: no segment stored or frame received according to /metrics", u)
		}
	}
	api := scrapeMetrics(t, c.env["API_URL"]+"/metrics?token="+c.env["OPERATOR_TOKEN"])
	api.check(t, "api", apiMetrics)
	if v := api.value(`vigia_http_requests_total{code="200",route="GET /api/v4/cameras"}`); v == 0 {
		t.Errorf("api: vigia_http_requests_total does not count the camera listings")
	}

	// Audit storage for the drained node's cameras.
	for _, cam := range moved {
		segs := c.segments(t, cam)
		var lastOld, firstNew *segment
		for i := range segs {
			s := &segs[i]
			if s.node(t, c) == victim {
				lastOld = s
			} else if s.startMs > termAt.Add(-time.Second).UnixMilli() && firstNew == nil && lastOld != nil {
				firstNew = s
			}
		}
		if lastOld == nil || firstNew == nil {
			t.Errorf("camera %s: no segment of %s (%v) or none after it (%v)", cam, victim, lastOld, firstNew)
			continue
		}
		// The drained node finished the segment open at SIGTERM and uploaded it.
		if lastOld.endMs() < termAt.Add(-time.Second).UnixMilli() {
			t.Errorf("camera %s: last segment of %s ends at %s, %v before SIGTERM: its last segment was not uploaded",
				cam, victim, time.UnixMilli(lastOld.endMs()).Format(time.TimeOnly), termAt.Sub(time.UnixMilli(lastOld.endMs())))
		}
		gap := time.Duration(firstNew.startMs-lastOld.endMs()) * time.Millisecond
		if gap > worst {
			worst = gap
		}
		if gap > handoverBound {
			t.Errorf("camera %s: handover gap %v, want at most %v", cam, gap, handoverBound)
		}
		// No overlaps anywhere; after the settle, no gap but the handover.
		for i := 1; i < len(segs); i++ {
			g := segs[i].startMs - segs[i-1].endMs()
			if g < -1 {
				t.Errorf("camera %s: %s overlaps %s by %d ms", cam, segs[i].key, segs[i-1].key, -g)
			}
			if segs[i-1].startMs < settled.UnixMilli() || &segs[i] == firstNew {
				continue
			}
			if g > 1000 {
				t.Errorf("camera %s: gap of %d ms before %s, away from the handover", cam, g, segs[i].key)
			}
		}
	}
	t.Logf("handover: %d cameras of %s continued elsewhere; largest gap in storage %v (drain took %v)",
		len(moved), victim, worst, drained.Round(10*time.Millisecond))

	// The other cameras never stopped.
	for cam, node := range leases {
		if node == victim {
			continue
		}
		segs := c.segments(t, cam)
		for i := 1; i < len(segs); i++ {
			if segs[i-1].startMs < settled.UnixMilli() {
				continue
			}
			if g := segs[i].startMs - segs[i-1].endMs(); g > 1000 || g < -1 {
				t.Errorf("camera %s (on %s): gap of %d ms before %s", cam, node, g, segs[i].key)
			}
		}
	}

	// Ctrl-C stops the cluster cleanly.
	pids := c.allPIDs(t)
	c.stop(t)
	for name, p := range pids {
		if alive(p) {
			t.Errorf("%s (pid %d) still running after the cluster stopped", name, p)
		}
	}
}

// runningCluster is the make cluster script and what it printed.
type runningCluster struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan error
	dir  string
	env  map[string]string

	store storage.Store
	bus   *bus.Bus

	mu   sync.Mutex
	meta map[string]string // key → node
}

func startCluster(t *testing.T) *runningCluster {
	t.Helper()
	bin := buildVigia(t)
	dir := t.TempDir()
	ports := make([]int, 13)
	for i := range ports {
		ports[i] = testenv.FreePort(t)
	}
	cmd := exec.Command("bash", filepath.Join("cluster", "run.sh"))
	cmd.Env = append(os.Environ(),
		"VIGIA_BIN="+bin,
		"VIGIA_TOOLS="+filepath.Dir(testenv.Tool(t, "minio")),
		"CLUSTER_DIR="+dir,
		"CLUSTER_SEGMENT=2s",
		fmt.Sprintf("MINIO_PORT=%d", ports[0]),
		fmt.Sprintf("MINIO_CONSOLE_PORT=%d", ports[1]),
		fmt.Sprintf("NATS_PORTS=%d %d %d", ports[2], ports[8], ports[9]),
		fmt.Sprintf("NATS_CLUSTER_PORTS=%d %d %d", ports[10], ports[11], ports[12]),
		fmt.Sprintf("SYNTH_PORT=%d", ports[3]),
		fmt.Sprintf("API_PORT=%d", ports[4]),
		fmt.Sprintf("RECORDER_PORTS=%d %d %d", ports[5], ports[6], ports[7]),
	)
	c := &runningCluster{cmd: cmd, out: &syncBuffer{}, done: make(chan error, 1), dir: dir, meta: map[string]string{}}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- cmd.Wait() }() // exits when the script does
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			c.stop(t)
		}
		// Whatever the script could not stop (it failed) is ended here.
		for _, p := range c.allPIDs(t) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		if t.Failed() {
			t.Logf("make cluster output:\n%s", c.out.String())
			for _, name := range []string{"api", "recorder-1", "recorder-2", "recorder-3", "nats-1", "nats-2", "nats-3", "synthcam"} {
				b, _ := os.ReadFile(filepath.Join(dir, "logs", name+".log"))
				s := string(b)
				if len(s) > 3000 {
					s = s[len(s)-3000:]
				}
				t.Logf("%s log (tail):\n%s", name, s)
			}
		}
	})
	testenv.WaitFor(t, 180*time.Second, "make cluster to print 'cluster ready'", func() bool {
		select {
		case err := <-c.done:
			c.done <- err
			t.Fatalf("make cluster exited early: %v\n%s", err, c.out.String())
		default:
		}
		return strings.Contains(c.out.String(), "cluster ready")
	})
	c.env = readEnv(t, filepath.Join(dir, "cluster.env"))
	st, err := s3.New(context.Background(), s3.Options{Endpoint: c.env["MINIO_ENDPOINT"], Bucket: c.env["BUCKET"],
		AccessKey: c.env["MINIO_USER"], SecretKey: c.env["MINIO_PASSWORD"]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.store = st
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{URL: c.env["NATS_URL"]}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	c.bus = b
	for _, want := range []string{c.env["API_URL"], "/metrics", "vigia cameras", "Ctrl-C"} {
		if !strings.Contains(c.out.String(), want) {
			t.Errorf("make cluster output does not say %q", want)
		}
	}
	return c
}

// stop sends SIGINT (Ctrl-C) to the script and waits for it to exit 0.
func (c *runningCluster) stop(t *testing.T) {
	t.Helper()
	_ = c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("make cluster exited with %v after Ctrl-C", err)
		}
	case <-time.After(120 * time.Second):
		t.Errorf("make cluster still running 120 s after Ctrl-C")
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	if !strings.Contains(c.out.String(), "cluster: stopped") {
		t.Errorf("make cluster did not say it stopped:\n%s", c.out.String())
	}
}

// onlineThroughAPI counts the cameras the API lists as ONLINE, over every
// page of the listing.
func (c *runningCluster) onlineThroughAPI(t *testing.T) int {
	n := 0
	for page := 1; page <= 10; page++ {
		res, err := http.Get(fmt.Sprintf("%s/api/v4/cameras?page=%d&token=%s", c.env["API_URL"], page, c.env["API_TOKEN"]))
		if err != nil {
			t.Logf("api: %v", err)
			return 0
		}
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		var out struct {
			Data []struct {
				ID     string `json:"id"`
				Status string `json:"stream_status_desc"`
			} `json:"data"`
			LastPage int `json:"last_page"`
		}
		if res.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil {
			t.Logf("api: status %d: %.300s", res.StatusCode, body)
			return 0
		}
		for _, cam := range out.Data {
			if cam.Status == "ONLINE" {
				n++
			}
		}
		if page >= out.LastPage {
			break
		}
	}
	return n
}

// leases returns camera → node from the assign bucket.
func (c *runningCluster) leases(t *testing.T) map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out := map[string]string{}
	keys, err := c.bus.KVKeys(ctx, bus.BucketAssign)
	if err != nil {
		return out
	}
	for _, k := range keys {
		raw, _, err := c.bus.KVGet(ctx, bus.BucketAssign, k)
		if err != nil {
			continue
		}
		var l cluster.Lease
		if json.Unmarshal(raw, &l) == nil {
			out[k] = l.Node
		}
	}
	return out
}

// segment is one stored recording segment.
type segment struct {
	key            string
	startMs, durMs int64
}

func (s segment) endMs() int64 { return s.startMs + s.durMs }

// node returns the node that stored the segment (object metadata).
func (s segment) node(t *testing.T, c *runningCluster) string {
	c.mu.Lock()
	n, ok := c.meta[s.key]
	c.mu.Unlock()
	if ok {
		return n
	}
	obj, err := c.store.Stat(context.Background(), s.key)
	if err != nil {
		t.Fatalf("stat %s: %v", s.key, err)
	}
	n = obj.Metadata["node"]
	c.mu.Lock()
	c.meta[s.key] = n
	c.mu.Unlock()
	return n
}

// segments lists a camera's stored segments in start order.
func (c *runningCluster) segments(t *testing.T, cam string) []segment {
	t.Helper()
	var out []segment
	for obj, err := range storage.Walk(context.Background(), c.store, "rec/"+cam+"/") {
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if integrity.IsManifestKey(obj.Key) {
			continue // the hour's segment manifest (docs/storage.md, Integrity)
		}
		e, err := storage.ParseRecordingKey(obj.Key)
		if err != nil || e.Camera != cam {
			t.Fatalf("unexpected key %q: %v", obj.Key, err)
		}
		if e.Kind == storage.KindGap {
			continue // a gap record
		}
		out = append(out, segment{key: obj.Key, startMs: e.StartMs, durMs: e.DurMs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].startMs < out[j].startMs })
	return out
}

func (c *runningCluster) hasSegmentAfter(t *testing.T, cam string, at time.Time) bool {
	for _, s := range c.segments(t, cam) {
		if s.startMs > at.UnixMilli() {
			return true
		}
	}
	return false
}

// pid returns the process id the script wrote for name.
func (c *runningCluster) pid(t *testing.T, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, "pids", name+".pid"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// port returns the HTTP port of a node from its configuration.
func (c *runningCluster) port(t *testing.T, node string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, node, "vigia.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), `http: {addr: "127.0.0.1:`)
	if !ok {
		t.Fatalf("no http.addr in the configuration of %s", node)
	}
	p, err := strconv.Atoi(rest[:strings.IndexByte(rest, '"')])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// allPIDs returns the processes the script started and still lists.
func (c *runningCluster) allPIDs(t *testing.T) map[string]int {
	out := map[string]int{}
	files, _ := filepath.Glob(filepath.Join(c.dir, "pids", "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if p, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && p > 1 {
			out[strings.TrimSuffix(filepath.Base(f), ".pid")] = p
		}
	}
	return out
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// spooled lists the files left under a spool directory.
func spooled(t *testing.T, dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	return out
}

// readEnv reads the KEY=VALUE lines of the script's cluster.env.
func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

// wantReplicas checks that every stream of the cluster's NATS (the
// buckets' included) has n replicas.
func (c *runningCluster) wantReplicas(t *testing.T, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	streams := 0
	for info := range c.bus.JetStream().ListStreams(ctx).Info() {
		streams++
		if info.Config.Replicas != n {
			t.Errorf("stream %s: %d replicas, want %d", info.Config.Name, info.Config.Replicas, n)
		}
	}
	if streams == 0 {
		t.Errorf("no stream in the cluster's NATS")
	}
}
