package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/vigia/vigia/bus"
	"github.com/vigia/vigia/camera"
	"github.com/vigia/vigia/ingest/rtmp"
	"github.com/vigia/vigia/testenv"
)

// TestRTMPPushMovesLease: an RTMP push camera is recorded by the node its
// publisher reaches; when the publisher moves to another node, that node
// takes the camera's lease and the first one stops.
func TestRTMPPushMovesLease(t *testing.T) {
	t.Parallel()
	e := newClusterEnv(t, 0)
	portA, portB := testenv.FreePort(t), testenv.FreePort(t)
	e.nodeWith("pa", fmt.Sprintf("rtmp: {addr: \"127.0.0.1:%d\"}\n", portA))
	e.nodeWith("pb", fmt.Sprintf("rtmp: {addr: \"127.0.0.1:%d\"}\n", portB))
	b, _ := json.Marshal(camera.Config{ID: "push1", ConnectionType: camera.RTMP, HistoryDays: 1, Sound: true})
	if _, err := e.bus.KV(bus.BucketCameras).Put(context.Background(), "push1", b); err != nil {
		t.Fatal(err)
	}
	clip := rtmpClip(t)
	waitNode := func(port int) {
		testenv.WaitFor(t, 20*time.Second, "rtmp listener", func() bool { return tcpOpen(fmt.Sprintf("127.0.0.1:%d", port)) })
	}
	waitNode(portA)
	waitNode(portB)

	ctxA, stopA := context.WithCancel(context.Background())
	ffmpegPushCtx(t, ctxA, clip, rtmp.PushURL("127.0.0.1", portA, []byte(clusterSecret), "push1"))
	start := time.Now()
	testenv.WaitFor(t, 30*time.Second, "push camera leased to node pa and recording", func() bool {
		_, ok := e.recordingSince("push1", start)
		return e.leases()["push1"] == "pa" && ok
	})
	stopA()
	moved := time.Now()
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	ffmpegPushCtx(t, ctxB, clip, rtmp.PushURL("127.0.0.1", portB, []byte(clusterSecret), "push1"))
	// A segment of pb's own: pa may still cut one that starts just after
	// the move while its publisher is being stopped.
	testenv.WaitFor(t, 30*time.Second, "push camera leased to node pb and recording there", func() bool {
		if e.leases()["push1"] != "pb" {
			return false
		}
		for _, s := range segments(t, e.st, "push1") {
			if s.StartMs <= moved.UnixMilli() {
				continue
			}
			if obj, err := e.st.Stat(context.Background(), s.Key); err == nil && obj.Metadata["node"] == "pb" {
				return true
			}
		}
		return false
	})
	segs := segments(t, e.st, "push1")
	nodes := map[string]bool{}
	for _, s := range segs {
		obj, err := e.st.Stat(context.Background(), s.Key)
		if err != nil {
			t.Fatal(err)
		}
		nodes[obj.Metadata["node"]] = true
	}
	if !nodes["pa"] || !nodes["pb"] {
		t.Errorf("segments written by nodes %v, want pa and pb", nodes)
	}
	for j := 1; j < len(segs); j++ {
		if gap := segs[j].StartMs - segs[j-1].EndMs(); gap < -1 {
			t.Errorf("segments overlap by %d ms", -gap)
		}
	}
}

// ffmpegPushCtx publishes clip in a loop to url until ctx ends or the test
// ends.
func ffmpegPushCtx(t *testing.T, ctx context.Context, clip, url string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "ffmpeg", "-v", "error", "-re", "-stream_loop", "-1", "-i", clip, "-c", "copy", "-f", "flv", url)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
}

// tcpOpen reports whether something listens at addr.
func tcpOpen(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
