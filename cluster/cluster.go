// Package cluster decides which recorder node records which camera, over
// NATS JetStream KV only: node heartbeats in "nodes", camera leases in
// "assign", camera configuration in "cameras" (docs/cluster.md).
//
// Each camera goes to the live node that wins rendezvous hashing weighted by
// capacity. A node records a camera only while it holds the camera's lease,
// taken by create or compare-and-set, renewed every RenewInterval. A node
// that cannot renew for FenceAfter stops writing the camera, before anyone
// can take the lease (LeaseTTL without an observed renewal).
package cluster

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camera"
)

// Timing defaults, chosen so that a dead node's cameras record elsewhere
// within 10 s (docs/cluster.md).
const (
	DefaultHeartbeat     = time.Second
	DefaultNodeTimeout   = 3 * time.Second
	DefaultRenewInterval = time.Second
	DefaultFenceAfter    = 3 * time.Second
	DefaultLeaseTTL      = 5 * time.Second
	DefaultTick          = 250 * time.Millisecond
)

// ErrClosed is returned after Close.
var ErrClosed = errors.New("cluster node closed")

// Config configures a Node.
type Config struct {
	// NodeID is this node's id, unique in the cluster.
	NodeID string

	// LiveURL is the base URL at which this node serves live video
	// (http.public_url); published in its heartbeat.
	LiveURL string

	// Capacity weighs this node in the assignment. It defaults to 100.
	Capacity int

	// Bus is the NATS connection.
	Bus *bus.Bus

	// Start records a camera this node now holds. It must not block for
	// long.
	Start func(cam camera.Config) error

	// Stop stops recording a camera and returns when its open segment is
	// finished.
	Stop func(id string)

	// Load, optional, reports the number of cameras recording.
	Load func() int

	// Timing; zero values take the defaults above.
	Heartbeat, NodeTimeout, RenewInterval, FenceAfter, LeaseTTL, Tick time.Duration

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
	if c.RenewInterval <= 0 {
		c.RenewInterval = DefaultRenewInterval
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
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
}

// NodeInfo is a node's heartbeat in the "nodes" bucket.
type NodeInfo struct {
	ID       string    `json:"id"`
	LiveURL  string    `json:"live_url"`
	Capacity int       `json:"capacity"`
	Load     int       `json:"load"`
	Started  time.Time `json:"started"`
	At       time.Time `json:"at"`
}

// Lease is a camera's lease in the "assign" bucket. Expiry is judged by
// observers from the time they last saw the lease change, not from these
// clocks, so clock skew between nodes does not matter.
type Lease struct {
	Node      string    `json:"node"`
	RenewedAt time.Time `json:"renewed_at"`
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

// Start joins the cluster and runs the assignment loop until Close.
func (n *Node) Start(ctx context.Context) error {
	st, err := newState(ctx, n.cfg)
	if err != nil {
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

// Holding returns the cameras this node holds a lease for and records.
func (n *Node) Holding() []string {
	if n.state == nil {
		return nil
	}
	return n.state.holding()
}
