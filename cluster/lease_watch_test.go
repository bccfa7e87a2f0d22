package cluster

import (
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/zap"
)

func TestLateLeaseChangesDoNotStopAHeldCamera(t *testing.T) {
	lease := func(node, instance string) []byte {
		b, _ := json.Marshal(Lease{Node: node, Instance: instance})
		return b
	}
	for _, tc := range []struct {
		name string
		e    Entry
		keep bool
	}{
		{"older renewal by the previous holder", Entry{Key: "c1", Value: lease("a", "x"), Rev: 9}, true},
		{"older delete", Entry{Key: "c1", Rev: 8, Deleted: true}, true},
		{"our own write", Entry{Key: "c1", Value: lease("b", "me"), Rev: 10}, true},
		{"our own later write, answer lost", Entry{Key: "c1", Value: lease("b", "me"), Rev: 12}, true},
		{"newer take by another node", Entry{Key: "c1", Value: lease("a", "x"), Rev: 11}, false},
		{"newer take by another process with our id", Entry{Key: "c1", Value: lease("b", "twin"), Rev: 11}, false},
		// Deleted by someone else: the camera records on and the lease is
		// written again.
		{"newer delete", Entry{Key: "c1", Rev: 11, Deleted: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := newState(Config{NodeID: "b", Log: zap.NewNop()}, "me")
			st.cfg.defaults()
			st.mine["c1"] = &held{rev: 10}
			if tc.e.Deleted {
				st.leaseDeleted(tc.e, false)
			} else {
				st.onLease(tc.e)
			}
			if got := st.mine["c1"] != nil; got != tc.keep {
				t.Errorf("lease held after the change: %v, want %v", got, tc.keep)
			}
			if h := st.mine["c1"]; h != nil && h.missing != (tc.e.Deleted && tc.e.Rev > 10) {
				t.Errorf("lease to be written again: %v", h.missing)
			}
		})
	}
}

// A contest ends when this process's lease is seen, whether the watcher
// or the answer to the write tells first; the double recording is
// reported either way.
func TestContestEndsOnOwnLeaseSeen(t *testing.T) {
	var got []string
	st := newState(Config{NodeID: "b", Log: zap.NewNop(), OnDuplicate: func(id string, _ time.Duration) { got = append(got, id) }}, "me")
	st.cfg.defaults()
	st.mine["c1"] = &held{rev: 10, recording: true, contested: time.Now(), other: Lease{Node: "a", TakenAt: time.Now().Add(-time.Minute)}}
	b, _ := json.Marshal(Lease{Node: "b", Instance: "me"})
	st.onLease(Entry{Key: "c1", Value: b, Rev: 12})
	if h := st.mine["c1"]; h == nil || !h.contested.IsZero() || h.rev != 12 {
		t.Fatalf("held after its own lease was seen: %+v", h)
	}
	st.retaken("c1", 12, nil)
	if len(got) != 1 {
		t.Errorf("double recording reported %d times, want once", len(got))
	}
}
