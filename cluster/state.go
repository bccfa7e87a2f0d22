package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camera"
)

// seenLease is a lease as observed through the watcher.
type seenLease struct {
	node string
	rev  uint64
	seen time.Time // local time the lease last changed
}

// held is a camera this node holds.
type held struct {
	rev       uint64
	renewedOK time.Time
	recording bool
}

// result is the end of an asynchronous stop.
type stopped struct{ id string }

// state is owned by the loop goroutine.
type state struct {
	cfg     Config
	log     *zap.Logger
	cams    jetstream.KeyValue
	nodes   jetstream.KeyValue
	assign  jetstream.KeyValue
	started time.Time

	cameras map[string]camera.Config
	members map[string]time.Time // node id → last heartbeat seen (local clock)
	infos   map[string]NodeInfo
	leases  map[string]seenLease
	mine    map[string]*held
	busy    map[string]bool // a stop is running
	stops   chan stopped
	claims  chan claimReq

	mu       sync.Mutex
	snapshot []string
}

func newState(ctx context.Context, cfg Config) (*state, error) {
	b := cfg.Bus
	st := &state{
		cfg:     cfg,
		log:     cfg.Log,
		cams:    b.KV(bus.BucketCameras),
		nodes:   b.KV(bus.BucketNodes),
		assign:  b.KV(bus.BucketAssign),
		started: time.Now(),
		cameras: map[string]camera.Config{},
		members: map[string]time.Time{},
		infos:   map[string]NodeInfo{},
		leases:  map[string]seenLease{},
		mine:    map[string]*held{},
		busy:    map[string]bool{},
		stops:   make(chan stopped, 64),
		claims:  make(chan claimReq),
	}
	if st.cams == nil || st.nodes == nil || st.assign == nil {
		return nil, errors.New("cluster: nats buckets missing")
	}
	if err := st.heartbeat(ctx); err != nil {
		return nil, err
	}
	return st, nil
}

func (st *state) holding() []string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]string(nil), st.snapshot...)
}

func (st *state) publishHolding() {
	ids := make([]string, 0, len(st.mine))
	for id, h := range st.mine {
		if h.recording {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	st.mu.Lock()
	st.snapshot = ids
	st.mu.Unlock()
}

// run is the assignment loop.
func (st *state) run(ctx context.Context) {
	camW, nodeW, leaseW := st.watch(ctx, st.cams), st.watch(ctx, st.nodes), st.watch(ctx, st.assign)
	tick := time.NewTicker(st.cfg.Tick)
	defer tick.Stop()
	hb := time.NewTicker(st.cfg.Heartbeat)
	defer hb.Stop()
	renew := time.NewTicker(st.cfg.RenewInterval)
	defer renew.Stop()
	synced := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			st.leave()
			return
		case e, ok := <-camW:
			if !ok {
				camW = st.watch(ctx, st.cams)
				continue
			}
			if e == nil {
				synced["cameras"] = true
				continue
			}
			st.onCamera(e)
		case e, ok := <-nodeW:
			if !ok {
				nodeW = st.watch(ctx, st.nodes)
				continue
			}
			if e == nil {
				synced["nodes"] = true
				continue
			}
			st.onNode(e)
		case e, ok := <-leaseW:
			if !ok {
				leaseW = st.watch(ctx, st.assign)
				continue
			}
			if e == nil {
				synced["assign"] = true
				continue
			}
			st.onLease(e)
		case s := <-st.stops:
			delete(st.busy, s.id)
		case req := <-st.claims:
			req.done <- st.claim(ctx, req.id)
		case <-hb.C:
			if !st.cfg.Bus.Conn().IsConnected() {
				continue
			}
			if err := st.heartbeat(ctx); err != nil {
				st.log.Debug("heartbeat failed", zap.Error(err))
			}
		case <-renew.C:
			st.renew(ctx)
		case <-tick.C:
			st.fence()
			if len(synced) == 3 && st.cfg.Bus.Conn().IsConnected() {
				st.reconcile(ctx)
			}
		}
	}
}

// watch starts a watcher on kv; its channel closes when the watcher ends.
func (st *state) watch(ctx context.Context, kv jetstream.KeyValue) <-chan jetstream.KeyValueEntry {
	out := make(chan jetstream.KeyValueEntry, 256)
	go func() {
		defer close(out)
		for ctx.Err() == nil {
			w, err := kv.WatchAll(ctx)
			if err != nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				continue
			}
			for e := range w.Updates() {
				select {
				case out <- e:
				case <-ctx.Done():
					_ = w.Stop()
					return
				}
			}
			_ = w.Stop()
		}
	}()
	return out
}

func (st *state) onCamera(e jetstream.KeyValueEntry) {
	if e.Operation() != jetstream.KeyValuePut {
		delete(st.cameras, e.Key())
		return
	}
	var c camera.Config
	if err := json.Unmarshal(e.Value(), &c); err != nil || c.Validate() != nil || c.ID != e.Key() {
		st.log.Warn("camera record ignored", zap.String("key", e.Key()))
		return
	}
	st.cameras[c.ID] = c
}

func (st *state) onNode(e jetstream.KeyValueEntry) {
	if e.Operation() != jetstream.KeyValuePut {
		delete(st.members, e.Key())
		delete(st.infos, e.Key())
		return
	}
	var ni NodeInfo
	if err := json.Unmarshal(e.Value(), &ni); err != nil {
		return
	}
	st.members[e.Key()] = time.Now()
	st.infos[e.Key()] = ni
}

func (st *state) onLease(e jetstream.KeyValueEntry) {
	if h := st.mine[e.Key()]; h != nil && e.Revision() < h.rev {
		// Older than the revision this node wrote: a change the watcher
		// delivers late (a renewal or a delete before our take). The lease
		// is ours; acting on it would stop a camera nobody else holds.
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		delete(st.leases, e.Key())
		if h := st.mine[e.Key()]; h != nil && !st.busy[e.Key()] {
			// Someone deleted our lease: stop, never write without one.
			st.lose(e.Key(), "lease deleted")
		}
		return
	}
	var l Lease
	if err := json.Unmarshal(e.Value(), &l); err != nil {
		return
	}
	st.leases[e.Key()] = seenLease{node: l.Node, rev: e.Revision(), seen: time.Now()}
	if h := st.mine[e.Key()]; h != nil && l.Node != st.cfg.NodeID {
		st.lose(e.Key(), "lease taken by "+l.Node)
	}
}

func (st *state) heartbeat(ctx context.Context) error {
	load := 0
	if st.cfg.Load != nil {
		load = st.cfg.Load()
	}
	now := time.Now().UTC()
	b, _ := json.Marshal(NodeInfo{ID: st.cfg.NodeID, LiveURL: st.cfg.LiveURL, Capacity: st.cfg.Capacity, Load: load, Started: st.started.UTC(), At: now})
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err := st.nodes.Put(ctx, st.cfg.NodeID, b)
	return err
}

// alive returns the members whose heartbeat was seen within NodeTimeout.
func (st *state) alive() map[string]member {
	out := map[string]member{}
	now := time.Now()
	for id, seen := range st.members {
		if now.Sub(seen) <= st.cfg.NodeTimeout {
			out[id] = member{ID: id, Capacity: st.infos[id].Capacity}
		}
	}
	return out
}

func (st *state) leaseValue() []byte {
	b, _ := json.Marshal(Lease{Node: st.cfg.NodeID, RenewedAt: time.Now().UTC()})
	return b
}
