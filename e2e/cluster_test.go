package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/cluster"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/sign"
	"github.com/vigia/vigia/storage"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

const clusterSecret = "cluster-test-secret-0123456789abcdef"

// clusterKeys are the keys of clusterSecret.
var clusterKeys = func() *sign.Keys {
	k, err := sign.New([]byte(clusterSecret))
	if err != nil {
		panic(err)
	}
	return k
}()

// clusterEnv is a NATS server, a MinIO bucket and synthetic cameras shared by
// recorder processes.
type clusterEnv struct {
	t      *testing.T
	bus    *bus.Bus
	natsAt string
	store  string // nats store dir
	cfg    *config.Config
	st     storage.Store
	cams   *synth.Server
	bin    string
	out    map[*exec.Cmd]*lockedBuffer // each recorder process's output
}

func newClusterEnv(t *testing.T, cameras int) *clusterEnv {
	e := &clusterEnv{t: t, bin: buildVigia(t), out: map[*exec.Cmd]*lockedBuffer{}}
	m := testenv.SharedMinIO(t)
	e.cfg = s3Config(t, m)
	e.st = openS3(t, e.cfg)
	var specs []synth.CameraSpec
	for i := 1; i <= cameras; i++ {
		specs = append(specs, synth.CameraSpec{Path: fmt.Sprintf("c%d", i), Codec: "h264"})
	}
	e.cams = startSynth(t, specs...)
	e.natsAt = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	e.store = t.TempDir()
	e.startNATS()
	t.Cleanup(func() {
		if e.bus != nil {
			e.bus.Close()
		}
	})
	for _, s := range specs {
		e.register(s.Path)
	}
	return e
}

func (e *clusterEnv) startNATS() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, bus.Options{Listen: e.natsAt, StoreDir: e.store}, zap.NewNop())
	if err != nil {
		e.t.Fatal(err)
	}
	e.bus = b
}

func (e *clusterEnv) stopNATS() {
	e.bus.Close()
	e.bus = nil
}

func (e *clusterEnv) register(id string) {
	sealed, err := camera.Seal(clusterKeys, e.cams.URL(id))
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := json.Marshal(camera.Config{ID: id, ConnectionType: camera.RTSP, SealedURL: sealed, HistoryDays: 1, Trusted: true})
	if _, err := e.bus.KV(bus.BucketCameras).Put(context.Background(), id, b); err != nil {
		e.t.Fatal(err)
	}
}

// node starts a recorder process.
func (e *clusterEnv) node(id string) *exec.Cmd { return e.nodeWith(id, "") }

// nodeWith starts a recorder process with extra configuration lines.
func (e *clusterEnv) nodeWith(id, extra string) *exec.Cmd {
	dir := filepath.Join(e.t.TempDir(), id)
	f := filepath.Join(dir, "vigia.yaml")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if !strings.Contains(extra, "rtmp:") {
		// The push server of a cluster node listens from the start: on
		// loopback, on a free port, unless the test picks one.
		extra = "rtmp: {addr: \"127.0.0.1:0\"}\n" + extra
	}
	if !strings.Contains(extra, "recording:") {
		extra = "recording: {segment_duration: 2s}\n" + extra
	}
	yaml := fmt.Sprintf(`node_id: %s
data_dir: %s
http: {addr: "127.0.0.1:0"}
nats: {url: "nats://%s"}
security: {secret: %q}
storage: {backend: s3, endpoint: %q, bucket: %q, access_key: %q, secret_key: %q}
ingest: {backoff_max: 2s}
%s`, id, dir, e.natsAt, clusterSecret, e.cfg.Storage.Endpoint, e.cfg.Storage.Bucket, e.cfg.Storage.AccessKey, e.cfg.Storage.SecretKey, extra)
	if err := os.WriteFile(f, []byte(yaml), 0o600); err != nil {
		e.t.Fatal(err)
	}
	cmd := exec.Command(e.bin, "recorder", "--config", f)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.out[cmd] = out
	e.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		if e.t.Failed() {
			s := out.String()
			if len(s) > 8000 {
				s = s[len(s)-8000:]
			}
			e.t.Logf("node %s output (tail):\n%s", id, s)
		}
	})
	return cmd
}

// leases returns camera → node from the assign bucket.
func (e *clusterEnv) leases() map[string]string {
	out := map[string]string{}
	kv := e.bus.KV(bus.BucketAssign)
	keys, err := kv.Keys(context.Background())
	if err != nil {
		return out
	}
	for _, k := range keys {
		en, err := kv.Get(context.Background(), k)
		if err != nil {
			continue
		}
		var l cluster.Lease
		if json.Unmarshal(en.Value(), &l) == nil {
			out[k] = l.Node
		}
	}
	return out
}

// recordingSince reports whether camera has a stored segment starting after t.
func (e *clusterEnv) recordingSince(cam string, t time.Time) (time.Time, bool) {
	for _, s := range segments(e.t, e.st, cam) {
		if s.StartMs > t.UnixMilli() {
			return time.UnixMilli(s.StartMs), true
		}
	}
	return time.Time{}, false
}

func byNode(leases map[string]string) map[string][]string {
	out := map[string][]string{}
	for cam, n := range leases {
		out[n] = append(out[n], cam)
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// TestClusterFailover: three recorder processes share 30 cameras, each
// recorded by exactly one node; one is killed with SIGKILL and its cameras
// record elsewhere within the failover bound; a fourth node takes about a
// third; a camera removed from the registry stops; storage holds no
// overlapping segments.
func TestClusterFailover(t *testing.T) {
	t.Parallel()
	const n = 30
	e := newClusterEnv(t, n)
	nodes := map[string]*exec.Cmd{"n1": e.node("n1"), "n2": e.node("n2"), "n3": e.node("n3")}
	start := time.Now()
	testenv.WaitFor(t, 90*time.Second, "every camera leased and recording", func() bool {
		l := e.leases()
		if len(l) != n {
			return false
		}
		for cam := range l {
			if _, ok := e.recordingSince(cam, start); !ok {
				return false
			}
		}
		return true
	})
	// Let the assignment settle (nodes joining one after another move cameras).
	time.Sleep(3 * time.Second)
	split := byNode(e.leases())
	for id := range nodes {
		if c := len(split[id]); c < 4 || c > 17 {
			t.Errorf("node %s holds %d of %d cameras, want about a third", id, c, n)
		}
	}

	victim := "n1"
	moved := split[victim]
	if err := nodes[victim].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = nodes[victim].Process.Wait()
	killedAt := time.Now()
	var worst time.Duration
	testenv.WaitFor(t, 60*time.Second, "the killed node's cameras recording elsewhere", func() bool {
		worst = 0
		for _, cam := range moved {
			at, ok := e.recordingSince(cam, killedAt)
			if !ok {
				return false
			}
			if d := at.Sub(killedAt); d > worst {
				worst = d
			}
		}
		return true
	})
	t.Logf("failover: %d cameras of the killed node recording again within %v of the kill", len(moved), worst)
	l := e.leases()
	for _, cam := range moved {
		if l[cam] == victim || l[cam] == "" {
			t.Errorf("camera %s still leased to %q", cam, l[cam])
		}
	}

	// A new node takes about a third of the cameras.
	nodes["n4"] = e.node("n4")
	added := time.Now()
	testenv.WaitFor(t, 60*time.Second, "the new node recording its share", func() bool {
		mine := byNode(e.leases())["n4"]
		if len(mine) < 4 {
			return false
		}
		for _, cam := range mine {
			if _, ok := e.recordingSince(cam, added); !ok {
				return false
			}
		}
		return true
	})
	time.Sleep(3 * time.Second)
	if c := len(byNode(e.leases())["n4"]); c < 4 || c > 17 {
		t.Errorf("new node holds %d cameras, want about a third of %d", c, n)
	}

	// Removing a camera from the registry stops its recording.
	if err := e.bus.KV(bus.BucketCameras).Delete(context.Background(), "c1"); err != nil {
		t.Fatal(err)
	}
	removed := time.Now()
	testenv.WaitFor(t, 5*time.Second, "lease of the removed camera released", func() bool {
		_, ok := e.leases()["c1"]
		return !ok
	})
	time.Sleep(4 * time.Second)
	if at, ok := e.recordingSince("c1", removed.Add(time.Second)); ok {
		t.Errorf("removed camera c1 has a segment starting at %v, after its removal", at)
	}

	// Audit: no overlapping segments, every gap explained by a handover.
	for i := 1; i <= n; i++ {
		cam := fmt.Sprintf("c%d", i)
		segs := segments(t, e.st, cam)
		for j := 1; j < len(segs); j++ {
			if gap := segs[j].StartMs - segs[j-1].EndMs(); gap < -1 {
				t.Errorf("%s: segments overlap by %d ms (%s, %s)", cam, -gap, segs[j-1].Key, segs[j].Key)
			}
		}
	}
}

// TestClusterNATSOutage: a node cut off from NATS keeps recording its
// cameras, with no hole, for as long as NATS is away, and goes on when it
// returns.
func TestClusterNATSOutage(t *testing.T) {
	t.Parallel()
	e := newClusterEnv(t, 2)
	e.node("solo")
	start := time.Now()
	testenv.WaitFor(t, 60*time.Second, "both cameras recording", func() bool {
		for _, cam := range []string{"c1", "c2"} {
			if _, ok := e.recordingSince(cam, start.Add(2*time.Second)); !ok {
				return false
			}
		}
		return true
	})
	e.stopNATS()
	stoppedAt := time.Now()
	time.Sleep(12 * time.Second)
	e.startNATS()
	back := time.Now()
	testenv.WaitFor(t, 60*time.Second, "recording goes on after NATS returned", func() bool {
		_, ok := e.recordingSince("c1", back.Add(4*time.Second))
		return ok
	})
	for _, cam := range []string{"c1", "c2"} {
		var during []stored
		for _, s := range segments(t, e.st, cam) {
			if s.EndMs() > stoppedAt.UnixMilli()-2000 && s.StartMs < back.UnixMilli()+4000 {
				during = append(during, s)
			}
		}
		if len(during) == 0 || during[0].StartMs > stoppedAt.UnixMilli() || during[len(during)-1].EndMs() < back.UnixMilli() {
			t.Errorf("%s: segments across the outage do not cover it: %v", cam, during)
		}
		// Recording never waited for NATS: no hole across the outage.
		auditContinuity(t, during, time.Second)
	}
}
