// Package cluster decides which recorder node records which camera, over
// NATS JetStream KV only: node heartbeats in "nodes", camera leases in
// "assign", camera configuration in "cameras" (docs/cluster.md).
//
// Each camera goes to the live node that wins rendezvous hashing weighted by
// capacity, among the nodes with room for it. A node records a camera only
// while it holds the camera's lease, taken by create or compare-and-set and
// kept alive by the node's heartbeat: one write a second for the whole
// node, however many cameras it holds. A node cut from NATS keeps recording
// the cameras it holds, however long that lasts; it stops one only when it
// learns that another node holds it, or that it was removed or blocked.
// Two nodes may then record one camera for the length of a partition; the
// overlap ends once the nodes see each other again, and OnDuplicate counts
// it.
//
// The cluster decides; it does nothing to a camera itself. It tells the
// node's Owners which cameras to record, with their record and lease epoch,
// and which to stop, and why (blocked, removed, or handed over). One goroutine (the loop) owns the state; every request
// to NATS and every stop runs in a goroutine of its own and reports back to
// the loop, so a slow NATS server or a slow stop never delays heartbeats
// or the handling of a lease.
package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/status"
)

// Timing defaults, chosen so that a dead node's cameras record elsewhere
// within 10 s (docs/cluster.md).
const (
	DefaultHeartbeat   = time.Second
	DefaultNodeTimeout = 3 * time.Second
	DefaultFenceAfter  = 3 * time.Second
	DefaultLeaseTTL    = 5 * time.Second
	DefaultTick        = 250 * time.Millisecond
)

// Errors of a Node.
var (
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("cluster node closed")

	// ErrNodeIDInUse is returned by Start, and by Err, when a live node of
	// the cluster already uses this node's id.
	ErrNodeIDInUse = errors.New("node id already used by a live node")

	// ErrNotPush is returned by Claim for a camera that is not an RTMP push
	// camera.
	ErrNotPush = errors.New("not an rtmp push camera")
)

// Owners records the cameras this node holds. The cluster only says which
// cameras to record, with which record, under which lease; the owners do
// everything else for a camera (docs/cluster.md, Camera life).
type Owners interface {
	// Record makes the node record cam, held under the lease taken at
	// revision epoch, and returns at once. It is called again whenever
	// the camera's record changes while the node records it.
	Record(cam camera.Config, epoch uint64)

	// Stop makes the node stop recording camera id, for cause, and
	// returns once its last segment is finished and its end stored for
	// the next holder. cause is why the cluster let the camera go:
	// status.CauseCameraBlocked, status.CauseCameraRemoved, or
	// status.CauseNodeHandover (another node wins it, or this node stops
	// holding it). The cluster calls it from a goroutine of its own.
	Stop(id string, cause status.Cause)
}

// Config configures a Node.
type Config struct {
	// NodeID is this node's id, unique in the cluster.
	NodeID string

	// LiveURL is the base URL at which this node serves live video
	// (http.public_url); published in its heartbeat.
	LiveURL string

	// Capacity weighs this node in the assignment. It defaults to 100.
	Capacity int

	// MaxCameras, optional, returns how many cameras this node can hold;
	// 0 means no limit. Published in the heartbeat: no node assigns this
	// node more cameras than that.
	MaxCameras func() int

	// Cameras, Nodes and Assign are the buckets of camera records, node
	// heartbeats and camera leases.
	Cameras, Nodes, Assign Bucket

	// Connected, optional, reports whether NATS is reachable; while it is
	// not, the node takes nothing and renews nothing.
	Connected func() bool

	// Owners records the cameras this node holds.
	Owners Owners

	// Load, optional, reports the number of cameras recording.
	Load func() int

	// OnUnplaced, optional, receives the cameras that no live node has room
	// for and that this node would record if it had: it is called on
	// every change of that set.
	OnUnplaced func(ids []string)

	// OnDuplicate, optional, is told how long camera id was recorded both
	// by this node and by another one that took its lease while this node
	// could not see it (a partition), once this node learns of it.
	OnDuplicate func(id string, d time.Duration)

	// Timing; zero values take the defaults above. The heartbeat renews
	// the node's leases; FenceAfter is how long after its last stored
	// heartbeat a node still takes push cameras' claims on leases it
	// holds but does not record.
	Heartbeat, NodeTimeout, FenceAfter, LeaseTTL, Tick time.Duration

	// Log is the node's logger.
	Log *zap.Logger
}

func (c *Config) defaults() {
	if c.Capacity <= 0 {
		c.Capacity = 100
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = DefaultHeartbeat
	}
	if c.NodeTimeout <= 0 {
		c.NodeTimeout = DefaultNodeTimeout
	}
	if c.FenceAfter <= 0 {
		c.FenceAfter = DefaultFenceAfter
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = DefaultLeaseTTL
	}
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.Connected == nil {
		c.Connected = func() bool { return true }
	}
	if c.MaxCameras == nil {
		c.MaxCameras = func() int { return 0 }
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
}

// NodeInfo is a node's heartbeat in the "nodes" bucket.
type NodeInfo struct {
	ID string `json:"id"`
	// Instance tells apart two processes that use the same id.
	Instance string `json:"instance,omitempty"`
	LiveURL  string `json:"live_url"`
	Capacity int    `json:"capacity"`
	// MaxCameras is how many cameras the node can hold, 0 for no limit.
	MaxCameras int       `json:"max_cameras,omitempty"`
	Load       int       `json:"load"`
	Started    time.Time `json:"started"`
	At         time.Time `json:"at"`
}

// Lease is a camera's lease in the "assign" bucket. It lives as long as the
// heartbeat of the process it names: observers judge that from the time
// they last saw the heartbeat change, not from these clocks, so clock skew
// between nodes does not matter.
type Lease struct {
	Node string `json:"node"`
	// Instance is the process of Node that holds the lease.
	Instance string    `json:"instance,omitempty"`
	TakenAt  time.Time `json:"taken_at"`
}

// Node is this process's membership in the cluster.
type Node struct {
	cfg    Config
	cancel context.CancelFunc
	done   chan struct{}
	state  *state
}

// New returns a Node; Start joins the cluster.
func New(cfg Config) *Node {
	cfg.defaults()
	return &Node{cfg: cfg}
}

// Start joins the cluster and runs the assignment loop until Close. It
// fails with ErrNodeIDInUse when a live node already uses this node's id.
func (n *Node) Start(ctx context.Context) error {
	st := newState(n.cfg, newInstance())
	if err := st.checkNodeID(ctx); err != nil {
		return err
	}
	if err := st.heartbeatNow(ctx); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.done = make(chan struct{})
	n.state = st
	go func() {
		defer close(n.done)
		st.run(runCtx)
	}()
	return nil
}

// Close leaves the cluster: cameras are stopped (their segments finished),
// their leases released so other nodes take them at once, and the heartbeat
// removed.
func (n *Node) Close() {
	if n.cancel == nil {
		return
	}
	n.cancel()
	<-n.done
}

// Err returns ErrNodeIDInUse once another live process was seen using this
// node's id (this node then records nothing), nil otherwise.
func (n *Node) Err() error {
	if n.state == nil {
		return nil
	}
	return n.state.err()
}

// Claim takes the lease of push camera id for this node, because its
// publisher connected here, and starts recording it. The node that held it
// sees the lease taken and stops.
func (n *Node) Claim(ctx context.Context, id string) error {
	if n.state == nil {
		return ErrClosed
	}
	req := claimReq{id: id, done: make(chan error, 1)}
	select {
	case n.state.claims <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-n.done:
		return ErrClosed
	}
	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-n.done:
		return ErrClosed
	}
}

func newInstance() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// LeaseNode returns the node a lease record of the "assign" bucket names,
// "" when the record does not decode.
func LeaseNode(raw []byte) string {
	var l Lease
	if json.Unmarshal(raw, &l) != nil {
		return ""
	}
	return l.Node
}
