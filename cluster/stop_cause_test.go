package cluster

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vigia/vigia/status"
)

// The cluster says why it stops a camera, where it decides to: blocked,
// removed from the registry, won by another node, or let go as the node
// leaves.
func TestStopCauses(t *testing.T) {
	tests := []struct {
		name string
		act  func(w *world, n *Node, id string)
		want status.Cause
	}{
		{"blocked", func(w *world, _ *Node, id string) {
			c := rtsp(id)
			c.Blocked = true
			w.putCamera(c)
		}, status.CauseCameraBlocked},
		{"removed", func(w *world, _ *Node, id string) { w.deleteCamera(id) }, status.CauseCameraRemoved},
		{"another node wins", func(w *world, _ *Node, _ string) { w.start("b") }, status.CauseNodeHandover},
		{"node leaving", func(_ *world, n *Node, _ string) { n.Close() }, status.CauseNodeHandover},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t)
				id := wins("b", []string{"a", "b"}, 1)[0]
				w.putCamera(rtsp(id))
				n := w.start("a")
				settle(2 * time.Second)
				if got := w.fleet.recorder(id); got != "a" {
					t.Fatalf("%s recorded by %q, want a", id, got)
				}
				tt.act(w, n, id)
				settle(5 * time.Second)
				if got := w.fleet.stopCauses("a", id); !slices.Equal(got, []status.Cause{tt.want}) {
					t.Errorf("stops of %s on a: %v, want [%s]", id, got, tt.want)
				}
			})
		})
	}
}
