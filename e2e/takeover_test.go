package e2e

import (
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/testenv"
)

// TestTakeover150Cameras: two recorder processes share 300 cameras (6 s
// segments, so that MinIO on the test machine keeps up with the uploads);
// the busier, holding about 150, is killed with SIGKILL. The test measures,
// for each of its cameras, when the survivor's status turned ONLINE (logged)
// and the start of the first segment stored after the kill (the
// survivor's), and wants every one stored within 120 s and starting within
// 10 s of the kill (lease TTL 5 s, then the connections and the first
// keyframe). Long test (VIGIA_LONG=1).
func TestTakeover150Cameras(t *testing.T) {
	longTest(t)
	t.Parallel()
	const n = 300
	e := newClusterEnv(t, n)
	seg := "recording: {segment_duration: 6s}\n"
	n1, n2 := e.nodeWith("t1", seg), e.nodeWith("t2", seg)
	start := time.Now()
	testenv.WaitFor(t, 300*time.Second, "every camera leased and recording", func() bool {
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
	split := byNode(e.leases())
	victim, proc := "t1", n1
	if len(split["t2"]) > len(split["t1"]) {
		victim, proc = "t2", n2
	}
	moved := split[victim]
	if len(moved) < 130 {
		t.Fatalf("the busier node holds %d cameras, want about 150 (%d / %d)", len(moved), len(split["t1"]), len(split["t2"]))
	}
	if err := proc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = proc.Process.Wait()
	killedAt := time.Now()
	survivor := map[string]string{"t1": "t2", "t2": "t1"}[victim]
	var took []time.Duration
	// online: when each camera became ONLINE on the survivor (its status's
	// since), which does not wait for uploads as storage does.
	online := map[string]time.Duration{}
	deadline := killedAt.Add(120 * time.Second)
	for {
		took = took[:0]
		for _, cam := range moved {
			if at, ok := e.recordingSince(cam, killedAt); ok {
				took = append(took, at.Sub(killedAt))
			}
			if _, seen := online[cam]; !seen {
				st, ok, err := e.bus.GetStatus(t.Context(), cam)
				if err == nil && ok && st.Node == survivor && st.Code == status.Online && st.Since.After(killedAt) {
					online[cam] = st.Since.Sub(killedAt)
				}
			}
		}
		if len(took) == len(moved) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second) // polling storage
	}
	var on []time.Duration
	for _, d := range online {
		on = append(on, d)
	}
	sort.Slice(on, func(i, j int) bool { return on[i] < on[j] })
	if len(on) > 0 {
		t.Logf("takeover: %d of %d cameras ONLINE on the survivor, after the kill: p50 %v, p90 %v, max %v", len(on), len(moved),
			on[len(on)/2].Round(10*time.Millisecond), on[(len(on)-1)*9/10].Round(10*time.Millisecond), on[len(on)-1].Round(10*time.Millisecond))
	}
	if len(took) == 0 {
		t.Fatalf("none of the %d cameras of the killed node recorded again within 120 s", len(moved))
	}
	if len(took) < len(moved) {
		t.Errorf("%d of the %d cameras of the killed node recorded again within 120 s; leases now: %d on the survivor",
			len(took), len(moved), len(byNode(e.leases())[survivor]))
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	pct := func(p int) time.Duration { return took[(len(took)-1)*p/100] }
	t.Logf("takeover: %d cameras of the killed node, first segment on the survivor after the kill: min %v, p50 %v, p90 %v, max %v",
		len(took), took[0].Round(10*time.Millisecond), pct(50).Round(10*time.Millisecond), pct(90).Round(10*time.Millisecond), took[len(took)-1].Round(10*time.Millisecond))
	if worst := took[len(took)-1]; worst > 10*time.Second {
		t.Errorf("takeover of %d cameras took %v, want every camera recording within 10 s", len(took), worst)
	}
}
