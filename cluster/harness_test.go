package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/status"
)

// recordCall is one Owners.Record call.
type recordCall struct {
	cam   camera.Config
	epoch uint64
	at    time.Time
}

// fleet is the owners of every node of a test: it records what each node
// was told and notes every moment two nodes recorded one camera.
type fleet struct {
	mu        sync.Mutex
	recording map[string]string // camera → node recording it
	records   map[string][]recordCall
	stops     map[string][]string // node → cameras stopped, in order
	stopAt    map[string]time.Time
	causes    map[string][]status.Cause // node/camera → causes of its stops, in order
	overlaps  []string
	gates     map[string]chan struct{} // node/camera → Stop waits for it
}

func newFleet() *fleet {
	return &fleet{
		recording: map[string]string{}, records: map[string][]recordCall{},
		stops: map[string][]string{}, stopAt: map[string]time.Time{}, causes: map[string][]status.Cause{},
		gates: map[string]chan struct{}{},
	}
}

type fleetOwners struct {
	f    *fleet
	node string
}

func (o fleetOwners) Record(cam camera.Config, epoch uint64) {
	f := o.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.recording[cam.ID]; n != "" && n != o.node {
		f.overlaps = append(f.overlaps, fmt.Sprintf("%s recorded by %s and %s", cam.ID, n, o.node))
	}
	f.recording[cam.ID] = o.node
	f.records[o.node] = append(f.records[o.node], recordCall{cam: cam, epoch: epoch, at: time.Now()})
}

func (o fleetOwners) Stop(id string, cause status.Cause) {
	f := o.f
	f.mu.Lock()
	gate := f.gates[o.node+"/"+id]
	f.mu.Unlock()
	if gate != nil {
		<-gate
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.recording[id] == o.node {
		delete(f.recording, id)
	}
	f.stops[o.node] = append(f.stops[o.node], id)
	f.stopAt[o.node+"/"+id] = time.Now()
	f.causes[o.node+"/"+id] = append(f.causes[o.node+"/"+id], cause)
}

// stopCauses returns the causes node's stops of camera id were given.
func (f *fleet) stopCauses(node, id string) []status.Cause {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]status.Cause(nil), f.causes[node+"/"+id]...)
}

// gate makes node's Stop of camera wait until the returned function runs.
func (f *fleet) gate(node, camera string) (open func()) {
	ch := make(chan struct{})
	f.mu.Lock()
	f.gates[node+"/"+camera] = ch
	f.mu.Unlock()
	return func() { close(ch) }
}

// recorded returns the cameras node was told to record, with how often.
func (f *fleet) recorded(node string) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for _, r := range f.records[node] {
		out[r.cam.ID]++
	}
	return out
}

func (f *fleet) lastRecord(node, id string) (recordCall, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rs := f.records[node]
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i].cam.ID == id {
			return rs[i], true
		}
	}
	return recordCall{}, false
}

func (f *fleet) stopped(node string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.stops[node]...)
}

func (f *fleet) recorder(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.recording[id]
}

func (f *fleet) overlapsSeen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.overlaps...)
}

// world is a cluster of nodes over in-memory buckets, for tests run in a
// synctest bubble.
type world struct {
	t                      *testing.T
	cameras, nodes, assign *memBucket
	fleet                  *fleet
}

func newWorld(t *testing.T) *world {
	return &world{t: t, cameras: newMemBucket(), nodes: newMemBucket(), assign: newMemBucket(), fleet: newFleet()}
}

// rtsp returns a pulled camera's record.
func rtsp(id string) camera.Config {
	return camera.Config{ID: id, ConnectionType: camera.RTSP, SealedURL: "sealed-" + id}
}

// push returns an RTMP push camera's record.
func push(id string) camera.Config {
	return camera.Config{ID: id, ConnectionType: camera.RTMP}
}

func (w *world) putCamera(c camera.Config) {
	w.t.Helper()
	b, _ := json.Marshal(c)
	if _, err := w.cameras.Put(context.Background(), c.ID, b); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) deleteCamera(id string) {
	w.t.Helper()
	if err := w.cameras.Delete(context.Background(), id, 0); err != nil {
		w.t.Fatal(err)
	}
}

// config returns node id's configuration over the world's buckets.
func (w *world) config(id string) Config {
	return Config{
		NodeID: id, Cameras: w.cameras, Nodes: w.nodes, Assign: w.assign,
		Owners: fleetOwners{f: w.fleet, node: id},
	}
}

// start starts node id; it is closed when the test ends.
func (w *world) start(id string, tweak ...func(*Config)) *Node {
	w.t.Helper()
	cfg := w.config(id)
	for _, f := range tweak {
		f(&cfg)
	}
	n := New(cfg)
	if err := n.Start(context.Background()); err != nil {
		w.t.Fatalf("node %s: %v", id, err)
	}
	w.t.Cleanup(n.Close)
	return n
}

// lease returns camera id's lease, and whether it has one.
func (w *world) lease(id string) (Lease, bool) {
	v := w.assign.value(id)
	if v == nil {
		return Lease{}, false
	}
	var l Lease
	_ = json.Unmarshal(v, &l)
	return l, true
}

// wins returns n camera ids that node wins among members, in order.
func wins(node string, members []string, n int) []string {
	ms := make([]member, len(members))
	for i, m := range members {
		ms[i] = member{ID: m, Capacity: 100}
	}
	var out []string
	for i := 0; len(out) < n; i++ {
		id := fmt.Sprintf("c%d", i)
		if winner(id, ms) == node {
			out = append(out, id)
		}
	}
	return out
}

// settle lets the bubble's time pass by d, then waits for every goroutine
// to block.
func settle(d time.Duration) {
	time.Sleep(d)
	synctestWait()
}

// cut is a node's view of a bucket that can be cut off, as for a process
// killed or cut from NATS: once cut, every request fails.
type cut struct {
	Bucket
	off *atomic.Bool
}

func (c cut) Get(ctx context.Context, key string) (Entry, error) {
	if c.off.Load() {
		return Entry{}, errInjected
	}
	return c.Bucket.Get(ctx, key)
}

func (c cut) Create(ctx context.Context, key string, value []byte) (uint64, error) {
	if c.off.Load() {
		return 0, errInjected
	}
	return c.Bucket.Create(ctx, key, value)
}

func (c cut) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	if c.off.Load() {
		return 0, errInjected
	}
	return c.Bucket.Update(ctx, key, value, rev)
}

func (c cut) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	if c.off.Load() {
		return 0, errInjected
	}
	return c.Bucket.Put(ctx, key, value)
}

func (c cut) Delete(ctx context.Context, key string, rev uint64) error {
	if c.off.Load() {
		return errInjected
	}
	return c.Bucket.Delete(ctx, key, rev)
}

// cutOff returns a tweak that gives a node buckets cut off when off is set.
func cutOff(off *atomic.Bool) func(*Config) {
	return func(c *Config) {
		c.Cameras = cut{c.Cameras, off}
		c.Nodes = cut{c.Nodes, off}
		c.Assign = cut{c.Assign, off}
	}
}
