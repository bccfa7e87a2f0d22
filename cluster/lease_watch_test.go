package cluster

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// leaseEntry is a lease as the watcher hands it over.
type leaseEntry struct {
	key  string
	node string
	rev  uint64
	op   jetstream.KeyValueOp
}

func (e leaseEntry) Bucket() string { return "camera_assign" }
func (e leaseEntry) Key() string    { return e.key }
func (e leaseEntry) Value() []byte {
	b, _ := json.Marshal(Lease{Node: e.node})
	return b
}
func (e leaseEntry) Revision() uint64                { return e.rev }
func (e leaseEntry) Created() time.Time              { return time.Time{} }
func (e leaseEntry) Delta() uint64                   { return 0 }
func (e leaseEntry) Operation() jetstream.KeyValueOp { return e.op }

func TestLateLeaseChangesDoNotStopAHeldCamera(t *testing.T) {
	newState := func() *state {
		return &state{
			cfg: Config{NodeID: "b"}, log: zap.NewNop(),
			leases: map[string]seenLease{}, mine: map[string]*held{"c1": {rev: 10}}, busy: map[string]bool{},
		}
	}
	for _, tc := range []struct {
		name string
		e    leaseEntry
		keep bool
	}{
		{"older renewal by the previous holder", leaseEntry{key: "c1", node: "a", rev: 9, op: jetstream.KeyValuePut}, true},
		{"older delete", leaseEntry{key: "c1", rev: 8, op: jetstream.KeyValueDelete}, true},
		{"our own write", leaseEntry{key: "c1", node: "b", rev: 10, op: jetstream.KeyValuePut}, true},
		{"newer take by another node", leaseEntry{key: "c1", node: "a", rev: 11, op: jetstream.KeyValuePut}, false},
		{"newer delete", leaseEntry{key: "c1", rev: 11, op: jetstream.KeyValueDelete}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newState()
			st.onLease(tc.e)
			if got := st.mine["c1"] != nil; got != tc.keep {
				t.Errorf("lease held after the change: %v, want %v", got, tc.keep)
			}
		})
	}
}
