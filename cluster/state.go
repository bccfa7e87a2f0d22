package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/status"
)

// seenLease is a lease as observed through the watcher.
type seenLease struct {
	node     string
	instance string
	rev      uint64
	seen     time.Time // local time the lease last changed
}

// held is a camera whose lease this node holds.
type held struct {
	epoch     uint64 // the lease's revision when this node took it
	rev       uint64 // the lease's revision last written by this node
	recording bool   // Owners.Record was called, and no Stop since
	record    camera.Config

	// missing: the lease was seen deleted, or not found, while the camera
	// records: it is written again.
	missing bool
	// contested is when another process's lease of the camera was seen
	// while this node, which the placement gives it to, records it; other
	// is that lease. Zero when the lease is this process's.
	contested time.Time
	other     Lease
	// read is when the lease was last read while contested.
	read time.Time
}

// awaiting is a camera this node wins and waits for: since when, and when
// its lease was last read.
type awaiting struct{ since, read time.Time }

// state is owned by the loop goroutine, but for mu's fields.
type state struct {
	cfg      Config
	log      *zap.Logger
	instance string
	started  time.Time

	// renewedOK is when the last heartbeat known to be stored was sent:
	// it keeps every lease of this process alive.
	renewedOK time.Time
	// watchedOK is when the last heartbeat of this process that the nodes
	// watch delivered was sent. A watch delivers the bucket's changes in
	// order, so every heartbeat stored before that one has been seen: the
	// view of the other nodes is current as of then, and no later.
	watchedOK time.Time
	// sightSince is when the node last began to see the others again (the
	// first heartbeat stored after an outage, or its watch catching up);
	// outage and behind are set while an outage, or a watch behind the
	// bucket, is logged.
	sightSince time.Time
	outage     bool
	behind     bool
	// rewatch asks the nodes watch to start again; rewatched is when it
	// last did.
	rewatch   chan struct{}
	rewatched time.Time
	// placed caches the placement for winsBack, computed at placedAt.
	placed   map[string]string
	placedAt time.Time

	cameras map[string]camera.Config
	members map[string]time.Time // node id → when its heartbeat was last seen changing (local clock)
	infos   map[string]NodeInfo
	// beats are the heartbeat revisions seen of each node, and when one
	// was last seen replacing another: members also counts a heartbeat
	// delivered again unchanged (a watch restarted) and every known node
	// after this node's own outage, as a node that may be alive; beats
	// says which are seen to be (seenBeating).
	beats  map[string]beat
	leases map[string]seenLease
	mine   map[string]*held
	taking map[string][]chan error // a take is under way; claims waiting for it
	busy   map[string]bool         // a stop is under way
	synced map[string]bool         // buckets whose watch delivered its current entries
	// awaiting are the cameras this node wins while a live node holds
	// their lease (awaitRelease).
	awaiting map[string]awaiting

	// Work running outside the loop reports back through results: pending
	// counts it, so that leave waits for all of it.
	results   chan func()
	pending   int
	beating   bool
	leaving   bool
	unplaced  []string
	conflictN int // heartbeats of another process with this node's id seen

	claims chan claimReq

	mu       sync.Mutex
	conflict bool
}

func newState(cfg Config, instance string) *state {
	return &state{
		cfg:      cfg,
		log:      cfg.Log,
		instance: instance,
		started:  time.Now(),
		cameras:  map[string]camera.Config{},
		members:  map[string]time.Time{},
		infos:    map[string]NodeInfo{},
		beats:    map[string]beat{},
		leases:   map[string]seenLease{},
		mine:     map[string]*held{},
		taking:   map[string][]chan error{},
		busy:     map[string]bool{},
		synced:   map[string]bool{},
		awaiting: map[string]awaiting{},
		results:  make(chan func()),
		claims:   make(chan claimReq),
		rewatch:  make(chan struct{}, 1),
	}
}

func (st *state) err() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.conflict {
		return fmt.Errorf("%w: %s", ErrNodeIDInUse, st.cfg.NodeID)
	}
	return nil
}

// spawn runs work in a goroutine of its own; the function work returns then
// runs on the loop.
func (st *state) spawn(work func() func()) {
	st.pending++
	go func() { st.results <- work() }()
}

// watchMsg is one message of a bucket's watch, as the loop receives it.
type watchMsg struct {
	e      Entry
	begin  bool // a new watch starts: its entries replace what was known
	synced bool // the watch delivered every current entry
}

// watch keeps a watch on b, restarting it when it fails, or when restart
// delivers (a watch that lags); the channel closes when ctx ends.
func (st *state) watch(ctx context.Context, b Bucket, restart <-chan struct{}) <-chan watchMsg {
	out := make(chan watchMsg, 256)
	send := func(m watchMsg) bool {
		select {
		case out <- m:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		defer close(out)
		for ctx.Err() == nil {
			wctx, cancel := context.WithCancel(ctx)
			ch, err := b.Watch(wctx)
			if err != nil {
				cancel()
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				continue
			}
			if !send(watchMsg{begin: true}) {
				cancel()
				return
			}
			if !st.follow(ch, send, restart) {
				cancel()
				return
			}
			cancel()
		}
	}()
	return out
}

// follow forwards one watch's entries until it ends or restart delivers;
// it reports false when send fails (ctx ended).
func (st *state) follow(ch <-chan Entry, send func(watchMsg) bool, restart <-chan struct{}) bool {
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				return true
			}
			if !send(watchMsg{e: e, synced: e.Key == ""}) {
				return false
			}
		case <-restart:
			return true
		}
	}
}

// view applies one bucket's watch messages to the loop's map of it: a new
// watch's entries replace the old ones, so that keys deleted while no watch
// ran are forgotten.
type view struct {
	name  string
	fresh map[string]bool // keys delivered since the watch began, until synced
}

// apply handles m; put and del change the loop's map (del is told whether
// the key was seen deleted or only missing from a new watch); keys lists
// it.
func (v *view) apply(st *state, m watchMsg, put func(Entry), del func(e Entry, missing bool), keys func() []string) {
	switch {
	case m.begin:
		v.fresh = map[string]bool{}
	case m.synced:
		for _, k := range keys() {
			if v.fresh != nil && !v.fresh[k] {
				del(Entry{Key: k, Deleted: true}, true)
			}
		}
		v.fresh = nil
		st.synced[v.name] = true
	case m.e.Deleted:
		del(m.e, false)
	default:
		if v.fresh != nil {
			v.fresh[m.e.Key] = true
		}
		put(m.e)
	}
}

// run is the loop.
func (st *state) run(ctx context.Context) {
	camW, nodeW, leaseW := st.watch(ctx, st.cfg.Cameras, nil), st.watch(ctx, st.cfg.Nodes, st.rewatch), st.watch(ctx, st.cfg.Assign, nil)
	camV, nodeV, leaseV := &view{name: "cameras"}, &view{name: "nodes"}, &view{name: "assign"}
	tick := time.NewTicker(st.cfg.Tick)
	defer tick.Stop()
	hb := time.NewTicker(st.cfg.Heartbeat)
	defer hb.Stop()
	for {
		select {
		case <-ctx.Done():
			st.leave()
			return
		case m, ok := <-camW:
			if ok {
				camV.apply(st, m, st.onCamera, st.camDeleted, st.cameraKeys)
			}
		case m, ok := <-nodeW:
			if ok {
				nodeV.apply(st, m, st.onNode, st.nodeDeleted, st.nodeKeys)
			}
		case m, ok := <-leaseW:
			if ok {
				leaseV.apply(st, m, st.onLease, st.leaseDeleted, st.leaseKeys)
			}
		case f := <-st.results:
			st.pending--
			f()
		case req := <-st.claims:
			st.claim(req)
		case <-hb.C:
			st.heartbeat()
		case <-tick.C:
			if st.blind() {
				// Cut off: try at every tick, so the outage ends
				// within a tick of NATS answering again.
				st.noteOutage()
				st.heartbeat()
			}
			st.noteBehind()
			st.restartLaggingWatch()
			st.reconcile()
		}
	}
}

func (st *state) onCamera(e Entry) {
	c, err := camera.Decode(e.Key, e.Value)
	if err != nil {
		st.log.Warn("camera record ignored", zap.String("key", e.Key), zap.Error(err))
		delete(st.cameras, e.Key)
		return
	}
	st.cameras[c.ID] = c
}

func (st *state) camDeleted(e Entry, _ bool) { delete(st.cameras, e.Key) }

func (st *state) cameraKeys() []string { return keysOf(st.cameras) }

func (st *state) onNode(e Entry) {
	var ni NodeInfo
	if err := json.Unmarshal(e.Value, &ni); err != nil {
		return
	}
	if e.Key == st.cfg.NodeID {
		if ni.Instance != st.instance {
			st.otherInstance(ni)
			return
		}
		// A heartbeat of ours whose answer was lost (it timed out but
		// was stored) renews the leases from when it was made: its value
		// is made before it is sent. Seen through the watch, it also
		// tells how current the view of the other nodes is.
		st.renewed(ni.At)
		st.watched(ni.At)
	}
	now := time.Now()
	st.members[e.Key] = now
	st.infos[e.Key] = ni
	b := st.beats[e.Key]
	if b.rev != 0 && e.Rev != b.rev {
		b.changed = now
	}
	b.rev = e.Rev
	st.beats[e.Key] = b
}

// beat is what the loop saw of a node's heartbeats.
type beat struct {
	rev     uint64    // the revision of the last one seen
	changed time.Time // when one was seen replacing another; zero before
}

// seenBeating reports whether node id's heartbeat was seen replacing another
// within NodeTimeout: the node is alive, not merely not known dead. A
// camera is handed to a node only when it is seen beating, so that a dead
// node's last heartbeat, delivered again by a restarted watch or counted
// as seen after this node's outage, does not take a camera from the node
// recording it for NodeTimeout.
func (st *state) seenBeating(id string) bool {
	b, ok := st.beats[id]
	return ok && !b.changed.IsZero() && st.viewAt().Sub(b.changed) <= st.cfg.NodeTimeout
}

// otherInstance handles a heartbeat of another process with this node's
// id, which only two processes started at the same moment get past Start
// with. The one that started later stands down: it stops its cameras,
// releases their leases and records nothing more.
func (st *state) otherInstance(ni NodeInfo) {
	st.conflictN++
	if st.conflictN%30 == 1 {
		st.log.Error("another process uses this node id: give each recorder a node_id of its own",
			zap.String("node", st.cfg.NodeID), zap.Time("other_started", ni.Started), zap.Time("started", st.started))
	}
	later := st.started.After(ni.Started) || (st.started.Equal(ni.Started) && st.instance > ni.Instance)
	if !later || st.standingDown() {
		return
	}
	st.mu.Lock()
	st.conflict = true
	st.mu.Unlock()
	for id := range st.mine {
		if !st.busy[id] {
			st.release(id, status.CauseNodeHandover, "node id used by another process")
		}
	}
}

func (st *state) standingDown() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.conflict
}

// nodeDeleted forgets a node whose heartbeat is gone. This node's own is
// never forgotten: it is alive whatever the bucket says. Its key expires
// (bus.NodeTTL) while it is cut from NATS, and the first watch after the
// outage then finds it missing; forgetting itself there would give its
// cameras to others in its own placement, and it would stop them while
// their new holders hand them back.
func (st *state) nodeDeleted(e Entry, _ bool) {
	if e.Key == st.cfg.NodeID {
		return
	}
	delete(st.members, e.Key)
	delete(st.infos, e.Key)
	delete(st.beats, e.Key)
}

func (st *state) nodeKeys() []string { return keysOf(st.members) }

// ours reports whether a lease was written by this process.
func (st *state) ours(node, instance string) bool {
	return node == st.cfg.NodeID && instance == st.instance
}

func (st *state) onLease(e Entry) {
	var l Lease
	if err := json.Unmarshal(e.Value, &l); err != nil {
		return
	}
	h := st.mine[e.Key]
	if h != nil && e.Rev <= h.rev {
		// Not newer than what this node wrote: a change the watcher
		// delivers late. Acting on it would stop a camera nobody else
		// holds.
		return
	}
	st.leases[e.Key] = seenLease{node: l.Node, instance: l.Instance, rev: e.Rev, seen: time.Now()}
	if h == nil {
		return
	}
	if st.ours(l.Node, l.Instance) {
		// A write of ours whose answer was lost, or not yet come.
		st.settled(e.Key, h, e.Rev)
		return
	}
	st.otherHolder(e.Key, h, l)
}

// leaseDeleted forgets a lease. The lease of a camera this node records,
// seen deleted by someone else or missing from a new watch, is written
// again at the next tick: the camera goes on recording (a lease another
// node writes meanwhile is seen as such).
func (st *state) leaseDeleted(e Entry, missing bool) {
	delete(st.leases, e.Key)
	h := st.mine[e.Key]
	if h == nil || st.busy[e.Key] || (!missing && e.Rev <= h.rev) {
		return
	}
	h.missing = true
}

func (st *state) leaseKeys() []string { return keysOf(st.leases) }

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func (st *state) nodeInfo() []byte {
	load := 0
	if st.cfg.Load != nil {
		load = st.cfg.Load()
	}
	b, _ := json.Marshal(NodeInfo{
		ID: st.cfg.NodeID, Instance: st.instance, LiveURL: st.cfg.LiveURL, Capacity: st.cfg.Capacity,
		MaxCameras: st.cfg.MaxCameras(), Load: load, Started: st.started.UTC(), At: time.Now().UTC(),
	})
	return b
}

// heartbeatNow puts the heartbeat once, before the loop starts.
func (st *state) heartbeatNow(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ioTimeout)
	defer cancel()
	sent := time.Now()
	if _, err := st.cfg.Nodes.Put(ctx, st.cfg.NodeID, st.nodeInfo()); err != nil {
		return fmt.Errorf("cluster heartbeat: %w", err)
	}
	st.renewedOK, st.sightSince, st.watchedOK = sent, sent, sent
	return nil
}

// heartbeat puts the heartbeat outside the loop, one at a time; each one
// stored renews every lease of this process, from when it was sent (the
// other nodes see it no earlier than that).
func (st *state) heartbeat() {
	if st.beating || st.leaving || st.standingDown() {
		return
	}
	if !st.cfg.Connected() {
		return
	}
	st.beating = true
	value := st.nodeInfo()
	st.spawn(func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
		sent := time.Now()
		_, err := st.cfg.Nodes.Put(ctx, st.cfg.NodeID, value)
		cancel()
		return func() {
			st.beating = false
			if err != nil {
				st.log.Debug("heartbeat failed", zap.Error(err))
			} else {
				st.renewed(sent)
			}
		}
	})
}

// holderLive reports whether the process a lease names is alive: its node's
// heartbeat, from that process, was seen changing within LeaseTTL (of
// viewAt: a node cut from the control plane holds to what it last saw).
func (st *state) holderLive(l seenLease) bool {
	seen, ok := st.members[l.node]
	return ok && st.viewAt().Sub(seen) <= st.cfg.LeaseTTL && st.infos[l.node].Instance == l.instance
}

// checkNodeID fails when another live process heartbeats with this node's
// id: a heartbeat under the id that changes within NodeTimeout. A
// heartbeat that does not change is a dead process's, this node's own from
// before a crash among them.
func (st *state) checkNodeID(ctx context.Context) error {
	get := func() (Entry, error) {
		ctx, cancel := context.WithTimeout(ctx, ioTimeout)
		defer cancel()
		return st.cfg.Nodes.Get(ctx, st.cfg.NodeID)
	}
	first, err := get()
	if err != nil {
		return nil // none, or the loop's own heartbeat will tell
	}
	deadline := time.Now().Add(st.cfg.NodeTimeout)
	poll := time.NewTicker(st.cfg.Heartbeat / 4)
	defer poll.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-poll.C:
		}
		e, err := get()
		if err != nil {
			continue
		}
		if e.Rev != first.Rev {
			var ni NodeInfo
			_ = json.Unmarshal(e.Value, &ni)
			return fmt.Errorf("%w: %q, by a process started at %s (give each recorder a node_id of its own)",
				ErrNodeIDInUse, st.cfg.NodeID, ni.Started.Format(time.RFC3339))
		}
	}
	return nil
}

// alive returns the members whose heartbeat was seen within NodeTimeout
// of viewAt.
func (st *state) alive() map[string]member {
	out := map[string]member{}
	now := st.viewAt()
	for id, seen := range st.members {
		if now.Sub(seen) <= st.cfg.NodeTimeout {
			ni := st.infos[id]
			out[id] = member{ID: id, Capacity: ni.Capacity, Max: ni.MaxCameras}
		}
	}
	// This process is alive whatever the bucket shows of it: its own
	// heartbeat may reach its watch late (a watch restarted after a server
	// restart), or have expired there while it was cut off. Leaving it out
	// would give its cameras to others in its own placement, and it would
	// stop them while their new holders hand them back.
	if !st.leaving && !st.standingDown() {
		out[st.cfg.NodeID] = member{ID: st.cfg.NodeID, Capacity: st.cfg.Capacity, Max: st.cfg.MaxCameras()}
	}
	return out
}

func (st *state) leaseValue() []byte {
	b, _ := json.Marshal(Lease{Node: st.cfg.NodeID, Instance: st.instance, TakenAt: time.Now().UTC()})
	return b
}
