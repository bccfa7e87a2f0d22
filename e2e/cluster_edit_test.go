package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/synth"
	"github.com/vigia/vigia/testenv"
)

// statusLog collects every status message of the cluster, with the time it
// arrived.
type statusLog struct {
	mu  sync.Mutex
	all []seenStatus
}

type seenStatus struct {
	status.Status
	at time.Time
}

func watchAllStatus(t *testing.T, b *bus.Bus) *statusLog {
	l := &statusLog{}
	sub, err := b.Conn().Subscribe(bus.SubjectStatusPrefix+">", func(m *nats.Msg) {
		var s status.Status
		if json.Unmarshal(m.Data, &s) == nil {
			l.mu.Lock()
			l.all = append(l.all, seenStatus{Status: s, at: time.Now()})
			l.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return l
}

// first returns the first status of camera after t that match accepts.
func (l *statusLog) first(camera string, t time.Time, match func(status.Status) bool) (seenStatus, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.all {
		if s.Camera == camera && s.at.After(t) && match(s.Status) {
			return s, true
		}
	}
	return seenStatus{}, false
}

// last returns the last status of camera before t.
func (l *statusLog) last(camera string, t time.Time) (seenStatus, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out seenStatus
	ok := false
	for _, s := range l.all {
		if s.Camera == camera && s.at.Before(t) {
			out, ok = s, true
		}
	}
	return out, ok
}

// edit is one change of a camera's record during a churn.
type edit struct {
	camera string
	kind   string // "stream", "password", "noop"
	at     time.Time
	width  int    // the stream's width after a stream edit
	node   string // the node recording the camera before a no-op edit
}

// churn is a run of random edits over a cluster of recorder processes.
type churn struct {
	cameras  int
	edits    int
	duration time.Duration
	kill     bool // SIGKILL one node a third of the way, start it again at two thirds
}

// run drives the churn and checks every edit took effect on the node
// recording the camera: a stream or password edit restarts the camera (it
// connects again and reports the new stream's size or ERRO PERMANENTE), an
// edit of nothing recorded does not.
func (c churn) run(t *testing.T) {
	e := newClusterEnv(t, 0)
	var specs []synth.CameraSpec
	for i := 1; i <= c.cameras; i++ {
		specs = append(specs,
			synth.CameraSpec{Path: fmt.Sprintf("e%d", i), User: "u", Pass: "p"},
			synth.CameraSpec{Path: fmt.Sprintf("e%d-sub", i), User: "u", Pass: "p", Small: true})
	}
	cams := startSynth(t, specs...)
	records := map[string]camera.Config{}
	put := func(rec camera.Config) {
		b, _ := json.Marshal(rec)
		if _, err := e.bus.KV(bus.BucketCameras).Put(context.Background(), rec.ID, b); err != nil {
			t.Fatal(err)
		}
		records[rec.ID] = rec
	}
	seal := func(url string) string {
		s, err := camera.Seal(clusterKeys, url)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	url := func(id, pass string, sub bool) string {
		u := cams.URL(id)
		if sub {
			u = cams.URL(id + "-sub")
		}
		return "rtsp://u:" + pass + "@" + u[len("rtsp://"):]
	}
	ids := make([]string, c.cameras)
	sub := map[string]bool{}
	for i := range ids {
		ids[i] = fmt.Sprintf("e%d", i+1)
		put(camera.Config{ID: ids[i], ConnectionType: camera.RTSP, SealedURL: seal(url(ids[i], "p", false)), HistoryDays: 1, Trusted: true})
	}
	log := watchAllStatus(t, e.bus)
	nodes := map[string]*exec.Cmd{}
	for _, n := range []string{"n1", "n2", "n3"} {
		nodes[n] = e.node(n)
	}
	start := time.Now()
	testenv.WaitFor(t, 90*time.Second, "every camera recording", func() bool {
		for _, id := range ids {
			if _, ok := e.recordingSince(id, start); !ok {
				return false
			}
		}
		return true
	})

	rng := rand.New(rand.NewPCG(1, 2))
	lastEdit := map[string]time.Time{}
	wrong := map[string]bool{}
	var edits []edit
	gap := c.duration / time.Duration(c.edits)
	var killedAt, restartedAt time.Time
	for i := 0; i < c.edits; i++ {
		if c.kill && i == c.edits/3 {
			_ = nodes["n1"].Process.Signal(syscall.SIGKILL)
			_, _ = nodes["n1"].Process.Wait()
			killedAt = time.Now()
		}
		if c.kill && i == 2*c.edits/3 {
			nodes["n1"] = e.node("n1")
			restartedAt = time.Now()
		}
		time.Sleep(gap/2 + time.Duration(rng.Int64N(int64(gap))))
		// A camera not edited in the last 6 s, so that each edit's effect
		// is told apart.
		var id string
		for {
			id = ids[rng.IntN(len(ids))]
			if time.Since(lastEdit[id]) > 6*time.Second {
				break
			}
		}
		rec := records[id]
		ed := edit{camera: id, at: time.Now()}
		switch k := rng.IntN(10); {
		case wrong[id] || k < 4:
			sub[id] = !sub[id]
			rec.SealedURL = seal(url(id, "p", sub[id]))
			ed.kind, ed.width = "stream", 1280
			if sub[id] {
				ed.width = 640
			}
			wrong[id] = false
		case k < 5:
			rec.SealedURL = seal(url(id, "bad", sub[id]))
			ed.kind = "password"
			wrong[id] = true
		default:
			rec.HistoryDays = 1 + rng.IntN(90)
			rec.Width, rec.Height = 1920+rng.IntN(100), 1080
			ed.kind = "noop"
			if s, ok := log.last(id, time.Now()); ok && s.Code == status.Online {
				ed.node = s.Node
			}
		}
		ed.at = time.Now()
		put(rec)
		lastEdit[id] = ed.at
		edits = append(edits, ed)
	}
	time.Sleep(15 * time.Second) // the last edits take effect

	var restart, settled, duringFailover []time.Duration
	noopRestarts := 0
	for _, ed := range edits {
		failover := c.kill && ed.at.After(killedAt.Add(-2*time.Second)) && ed.at.Before(killedAt.Add(12*time.Second))
		switch ed.kind {
		case "noop":
			if ed.node == "" || failover || (c.kill && ed.at.After(restartedAt.Add(-2*time.Second)) && ed.at.Before(restartedAt.Add(12*time.Second))) {
				continue // not recording before, or moving between nodes
			}
			if s, ok := log.first(ed.camera, ed.at, func(s status.Status) bool {
				return s.Code == status.Connecting && s.Node == ed.node
			}); ok && s.at.Sub(ed.at) < 5*time.Second {
				noopRestarts++
				t.Errorf("edit of nothing recorded restarted %s on %s after %v", ed.camera, ed.node, s.at.Sub(ed.at))
			}
		default:
			s, ok := log.first(ed.camera, ed.at, func(s status.Status) bool { return s.Code == status.Connecting })
			want := func(s status.Status) bool { return s.Code == status.Online && s.Width == ed.width }
			if ed.kind == "password" {
				want = func(s status.Status) bool { return s.Code == status.Permanent }
			}
			done, dok := log.first(ed.camera, ed.at, want)
			if !ok || !dok {
				t.Errorf("%s edit of %s at %s never took effect", ed.kind, ed.camera, ed.at.Format("15:04:05.000"))
				continue
			}
			if failover {
				duringFailover = append(duringFailover, done.at.Sub(ed.at))
				continue
			}
			restart = append(restart, s.at.Sub(ed.at))
			settled = append(settled, done.at.Sub(ed.at))
		}
	}
	t.Logf("%d edits (%d restarts measured, %d during a failover): restart after the edit %s; new stream ONLINE or ERRO PERMANENTE %s; during failover %s; no-op edits that restarted: %d",
		len(edits), len(restart), len(duringFailover), quantiles(restart), quantiles(settled), quantiles(duringFailover), noopRestarts)
	if out := os.Getenv("VIGIA_EDIT_REPORT"); out != "" {
		b, _ := json.MarshalIndent(map[string]any{"edits": len(edits), "restart_ms": ms(restart), "settled_ms": ms(settled),
			"failover_ms": ms(duringFailover), "noop_restarts": noopRestarts}, "", " ")
		_ = os.WriteFile(out, b, 0o644)
	}

	// No camera recorded by two nodes: no overlapping segments.
	for _, id := range ids {
		segs := segments(t, e.st, id)
		for j := 1; j < len(segs); j++ {
			if d := segs[j].StartMs - segs[j-1].EndMs(); d < -1 {
				t.Errorf("%s: segments overlap by %d ms (%s, %s)", id, -d, segs[j-1].Key, segs[j].Key)
			}
		}
	}
}

func quantiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "(none)"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[int(p*float64(len(s)-1))].Round(10 * time.Millisecond) }
	return fmt.Sprintf("p50 %v, p90 %v, max %v", q(0.5), q(0.9), s[len(s)-1].Round(10*time.Millisecond))
}

func ms(ds []time.Duration) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.Milliseconds()
	}
	return out
}

// TestClusterEdits: three recorder processes, random edits of cameras'
// records (stream, password, nothing recorded) while a node is killed and
// started again: every edit takes effect on the node recording the camera,
// an edit of nothing recorded restarts nothing, and no camera is recorded
// by two nodes.
func TestClusterEdits(t *testing.T) {
	t.Parallel()
	churn{cameras: 9, edits: 24, duration: 45 * time.Second, kill: true}.run(t)
}

// TestClusterEditsChurn is the measurement of docs/cluster.md: 30 cameras,
// 100 random edits over 5 minutes (VIGIA_LONG=1).
func TestClusterEditsChurn(t *testing.T) {
	if os.Getenv("VIGIA_LONG") == "" {
		t.Skip("long: set VIGIA_LONG=1 (make soak)")
	}
	churn{cameras: 30, edits: 100, duration: 5 * time.Minute}.run(t)
}

// TestDuplicateNodeIDRefused: a recorder started with the node id of a live
// recorder (two recorders on one host with the default id, a copied config)
// refuses to start with one line naming the id; the first keeps its
// cameras.
func TestDuplicateNodeIDRefused(t *testing.T) {
	t.Parallel()
	e := newClusterEnv(t, 2)
	first := e.node("same")
	start := time.Now()
	testenv.WaitFor(t, 60*time.Second, "both cameras recording", func() bool {
		for _, cam := range []string{"c1", "c2"} {
			if _, ok := e.recordingSince(cam, start); !ok {
				return false
			}
		}
		return true
	})
	held := e.leases()
	second := e.node("same")
	exited := make(chan error, 1)
	go func() { exited <- second.Wait() }()
	select {
	case err := <-exited:
		if err == nil {
			t.Fatal("the second recorder with the same node id exited 0")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second recorder with the same node id is still running after 30 s")
	}
	out := e.out[second].String()
	if !strings.Contains(out, "node id already used by a live node") || !strings.Contains(out, `"same"`) {
		t.Errorf("the refusal does not say why, naming the id:\n%s", out)
	}
	if n := strings.Count(out, "lease taken"); n != 0 {
		t.Errorf("the refused recorder took %d leases", n)
	}
	if got := e.leases(); !maps.Equal(got, held) {
		t.Errorf("leases %v after the refusal, want %v", got, held)
	}
	if strings.Contains(e.out[first].String(), "lease taken by") {
		t.Error("the first recorder lost a lease to the refused one")
	}
}

// TestClusterCapacity: two recorder processes that hold three cameras each
// (recording.max_cameras) and eight cameras: each node records three, and
// the two that fit nowhere are counted by the node that would record them
// and get an OFFLINE status saying why. A third node takes them.
func TestClusterCapacity(t *testing.T) {
	t.Parallel()
	e := newClusterEnv(t, 8)
	limit := "recording: {segment_duration: 2s, max_cameras: 3}\n"
	e.nodeWith("cap1", limit)
	e.nodeWith("cap2", limit)
	testenv.WaitFor(t, 60*time.Second, "six cameras leased", func() bool { return len(e.leases()) == 6 })
	time.Sleep(2 * time.Second) // nothing more is taken meanwhile
	split := byNode(e.leases())
	if len(split["cap1"]) != 3 || len(split["cap2"]) != 3 || len(e.leases()) != 6 {
		t.Fatalf("leases %v, want three on each node", split)
	}
	var unplaced []string
	for i := 1; i <= 8; i++ {
		id := fmt.Sprintf("c%d", i)
		if _, ok := e.leases()[id]; !ok {
			unplaced = append(unplaced, id)
		}
	}
	for _, id := range unplaced {
		testenv.WaitFor(t, 10*time.Second, id+" status saying no node has room", func() bool {
			s, ok, err := e.bus.GetStatus(context.Background(), id)
			return err == nil && ok && s.Code == status.Offline && strings.Contains(s.LastError, "no recorder node has room")
		})
	}
	e.nodeWith("cap3", limit)
	testenv.WaitFor(t, 60*time.Second, "the third node recording the two", func() bool {
		start := time.Now().Add(-30 * time.Second)
		for _, id := range unplaced {
			if _, ok := e.recordingSince(id, start); !ok {
				return false
			}
		}
		return len(e.leases()) == 8
	})
}
